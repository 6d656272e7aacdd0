#include "tools/cli/top_view.h"

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;

RankFigures Rank(int rank, std::optional<double> rate, std::optional<double> age = 1.0) {
  RankFigures figures;
  figures.rank = rank;
  figures.local_rank = rank % 2;
  figures.pid = 1000 + rank;
  figures.cpu_percent = 99.4;
  figures.rss_bytes = 1536ull << 20;
  figures.last_output_age_s = age;
  if (rate.has_value()) {
    figures.step = 1200 + rank;
    figures.steps_per_s = rate;
  }
  return figures;
}

TopReport Job(std::vector<RankFigures> a, std::vector<RankFigures> b) {
  TopReport report;
  report.state = "running";
  NodeFigures first{"a"};
  first.ranks = std::move(a);
  NodeFigures second{"b"};
  second.ranks = std::move(b);
  report.nodes = {first, second};
  return report;
}

std::vector<std::pair<std::string, int>> Who(const std::vector<Straggler>& stragglers) {
  std::vector<std::pair<std::string, int>> who;
  for (const Straggler& straggler : stragglers) who.emplace_back(straggler.node, straggler.rank);
  return who;
}

TEST(StragglerTest, UnderHalfTheMedianRateIsAStraggler) {
  TopReport report = Job({Rank(0, 10.0), Rank(1, 9.0)}, {Rank(2, 11.0), Rank(3, 4.0)});
  std::vector<Straggler> stragglers = FindStragglers(report);
  EXPECT_THAT(Who(stragglers), ElementsAre(std::make_pair(std::string("b"), 3)));
  EXPECT_EQ(stragglers[0].why, "4.00 steps/s, 0.42x the median 9.50");
  // Just at half is not under it.
  report.nodes[1].ranks[1].steps_per_s = 4.75;
  EXPECT_THAT(FindStragglers(report), IsEmpty());
}

TEST(StragglerTest, ARankThatStoppedWritingWhileOthersWriteIsAStraggler) {
  TopReport report = Job({Rank(0, std::nullopt, 2.0)}, {Rank(1, std::nullopt, 75.0)});
  std::vector<Straggler> stragglers = FindStragglers(report);
  EXPECT_THAT(Who(stragglers), ElementsAre(std::make_pair(std::string("b"), 1)));
  EXPECT_EQ(stragglers[0].why, "no output for 1m 15s");
  // All silent: nobody lags behind the others (a hang is hang_timeout's).
  report.nodes[0].ranks[0].last_output_age_s = 90;
  EXPECT_THAT(FindStragglers(report), IsEmpty());
}

TEST(StragglerTest, OnlyRunningRanksCountAndOneRateIsNoMedian) {
  TopReport report = Job({Rank(0, 10.0)}, {Rank(1, 1.0)});
  report.nodes[0].ranks[0].state = RankRunState::kExited;
  EXPECT_THAT(FindStragglers(report), IsEmpty());
  report.nodes[0].ranks[0].state = RankRunState::kRunning;
  EXPECT_THAT(Who(FindStragglers(report)), ElementsAre(std::make_pair(std::string("b"), 1)));
  report.nodes[1].ranks[0].state = RankRunState::kGone;
  EXPECT_THAT(FindStragglers(report), IsEmpty());
}

TEST(GatherTopTest, TheChiefSaysTheJobsStateAndAnUnreadNodeIsUnknown) {
  TopReport chief = Job({Rank(0, 1.0)}, {});
  chief.nodes.resize(1);
  chief.state = "starting";
  chief.run_id = "r1";
  chief.generation = 2;
  TopView view = GatherTop({"a", "b"}, 0, {chief, absl::UnavailableError("connection refused")});
  EXPECT_EQ(view.report.state, "running");
  EXPECT_EQ(view.report.run_id, "r1");
  EXPECT_EQ(view.report.generation, 2);
  ASSERT_EQ(view.report.nodes.size(), 2u);
  EXPECT_EQ(view.report.nodes[1].name, "b");
  EXPECT_FALSE(view.report.nodes[1].gpus.has_value());
  EXPECT_EQ(view.report.nodes[1].cpu_percent, std::nullopt);
  EXPECT_EQ(view.unread.at("b"), "connection refused");
  chief.state = "lost";
  EXPECT_EQ(GatherTop({"a", "b"}, 0, {chief, chief}).report.state, "failed");
  EXPECT_EQ(GatherTop({"a", "b"}, 1, {chief, absl::UnavailableError("x")}).report.state,
            "unknown");
}

TEST(RenderTopFrameTest, AFrameForPeople) {
  TopReport report = Job({Rank(0, 5.5), Rank(1, 5.0)}, {Rank(2, 1.25, 75.0)});
  report.run_id = "r1";
  report.nodes[0].cpu_percent = 52.4;
  report.nodes[0].memory_bytes = 3ull << 30;
  report.nodes[0].gpus = std::vector<GpuFigures>{{0, 98.0, 10ull << 30, 80ull << 30},
                                                  {1, std::nullopt, std::nullopt, 80ull << 30}};
  report.nodes[1].gpus.reset();
  RankFigures ended;
  ended.rank = 3;
  ended.local_rank = 1;
  ended.state = RankRunState::kExited;
  report.nodes[1].ranks.push_back(ended);
  TopView view{report, {{"c", "connection refused"}}};
  FrameOptions options;
  options.spec = "cluster.toml";
  options.now = absl::FromUnixSeconds(3600 * 12 + 4 * 60 + 5);
  EXPECT_EQ(absl::StrJoin(RenderTopFrame(view, options), "\n"),
            "fleetplan top  cluster.toml  job running  run r1  generation 0  12:04:05\n"
            "\n"
            "NODE  CPU  MEMORY   GPU  UTIL  GPU MEMORY\n"
            "a     52%  3.0 GiB  0    98%   10.0 GiB / 80.0 GiB\n"
            "                    1    ?     ? / 80.0 GiB\n"
            "b     ?    ?        ?\n"
            "\n"
            "NODE  RANK  LOCAL  PID   STATE    CPU  RSS      OUTPUT  STEP   STEPS/S\n"
            "a     0     0      1000  running  99%  1.5 GiB  1.0s    1,200  5.50\n"
            "a     1     1      1001  running  99%  1.5 GiB  1.0s    1,201  5.00\n"
            "b     2     0      1002  running  99%  1.5 GiB  1m 15s  1,202  1.25     "
            "straggler: 1.25 steps/s, 0.25x the median 5.00; no output for 1m 15s\n"
            "b     3     1      -     exited   -    -        -       -      -\n"
            "node c could not be read: connection refused");
}

TEST(RenderTopFrameTest, LiveSaysHowToQuitAndTheRuleAndColoursStragglers) {
  TopView view{Job({Rank(0, 5.0), Rank(1, 5.0)}, {Rank(2, 1.0)}), {}};
  FrameOptions options;
  options.live = true;
  options.color = true;
  std::vector<std::string> lines = RenderTopFrame(view, options);
  EXPECT_EQ(lines.back(), "q quits; " + StragglerRule());
  EXPECT_THAT(lines[lines.size() - 3],
              ::testing::HasSubstr("\x1b[33mstraggler: 1.00 steps/s, 0.20x the median 5.00"));
  EXPECT_EQ(StragglerRule(),
            "a running rank is a straggler when its steps per second are under 0.5x the median "
            "of the running ranks', or when it has written nothing for 60s while another rank "
            "wrote");
}

TEST(RenderTopFrameTest, NoJobNoRanks) {
  TopView view;
  view.report.nodes.push_back(NodeFigures{"a"});
  std::vector<std::string> lines = RenderTopFrame(view, FrameOptions{"s.toml"});
  EXPECT_THAT(lines, ::testing::Contains("a     ?    ?       none"));
  EXPECT_THAT(lines, ::testing::Contains("no rank of the job on any node"));
  EXPECT_EQ(lines[0].substr(0, 33), "fleetplan top  s.toml  job none  ");
}

}  // namespace
}  // namespace fleetplan
