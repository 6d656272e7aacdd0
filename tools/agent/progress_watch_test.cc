#include "tools/agent/progress_watch.h"

#include <unistd.h>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1000);

// A rank (pid 10) with a child (pid 11), whose CPU ticks the test sets.
class ProgressWatchTest : public ::testing::Test {
 protected:
  std::vector<ProcessInfo> Processes() const {
    return {{10, 1, rank_ticks_}, {11, 10, child_ticks_}, {12, 1, 5000 + stranger_ticks_}};
  }
  ProgressWatch Watch(GpuUtilization gpus = nullptr) {
    return ProgressWatch([this] { return Processes(); }, std::move(gpus), 100);
  }
  uint64_t rank_ticks_ = 100;
  uint64_t child_ticks_ = 50;
  uint64_t stranger_ticks_ = 0;
};

TEST_F(ProgressWatchTest, OutputIsProgress) {
  ProgressWatch watch = Watch();
  EXPECT_FALSE(watch.Sample({{0, 10, 100}}, kStart));  // the first only records
  EXPECT_FALSE(watch.Sample({{0, 10, 100}}, kStart + absl::Seconds(5)));
  EXPECT_TRUE(watch.Sample({{0, 10, 101}}, kStart + absl::Seconds(10)));
  EXPECT_FALSE(watch.Sample({{0, 10, 101}}, kStart + absl::Seconds(15)));
}

TEST_F(ProgressWatchTest, CpuTimeOfTheRanksTreeBeyondAWaitingRanksIsProgress) {
  ProgressWatch watch = Watch();
  watch.Sample({{0, 10, 0}}, kStart);
  // 5 s at 100 ticks/s: 1% of a core is 5 ticks, not progress.
  child_ticks_ += 5;
  EXPECT_FALSE(watch.Sample({{0, 10, 0}}, kStart + absl::Seconds(5)));
  child_ticks_ += 6;  // the child's work counts for the rank
  EXPECT_TRUE(watch.Sample({{0, 10, 0}}, kStart + absl::Seconds(10)));
  stranger_ticks_ += 400;  // a process that is not the rank's does not
  EXPECT_FALSE(watch.Sample({{0, 10, 0}}, kStart + absl::Seconds(15)));
}

TEST_F(ProgressWatchTest, ANewGenerationsRanksStartAfresh) {
  ProgressWatch watch = Watch();
  watch.Sample({{0, 10, 500}}, kStart);
  // Rank 0 is another process now (a restart), with less output so far.
  EXPECT_FALSE(watch.Sample({{0, 11, 3}}, kStart + absl::Seconds(5)));
  EXPECT_TRUE(watch.Sample({{0, 11, 9}}, kStart + absl::Seconds(10)));
}

TEST_F(ProgressWatchTest, ABusyGpuIsProgressAndOneThatDoesNotAnswerIsNotAskedAgain) {
  int asked = 0;
  std::optional<std::vector<int>> answer = std::vector<int>{0, 0};
  ProgressWatch watch = Watch([&] {
    ++asked;
    return answer;
  });
  EXPECT_EQ(watch.gpu_note(), "");
  watch.Sample({{0, 10, 0}}, kStart);
  EXPECT_FALSE(watch.Sample({{0, 10, 0}}, kStart + absl::Seconds(5)));
  answer = std::vector<int>{0, 37};
  EXPECT_TRUE(watch.Sample({{0, 10, 0}}, kStart + absl::Seconds(10)));
  answer = std::nullopt;
  EXPECT_FALSE(watch.Sample({{0, 10, 0}}, kStart + absl::Seconds(15)));
  EXPECT_EQ(watch.gpu_note(), "GPU utilization is not watched: nvidia-smi did not answer");
  watch.Sample({{0, 10, 0}}, kStart + absl::Seconds(20));
  EXPECT_EQ(asked, 4);
}

TEST(ProcessTreeTest, ParsesProcStatWithSpacesInTheName) {
  ProcessInfo info;
  ASSERT_TRUE(ParseProcStat(
      "4242 (py thon) (x)) S 17 4242 4242 0 -1 4194560 100 0 0 0 123 45 0 0 20 0 1 0 1 1 777",
      &info));
  EXPECT_EQ(info.pid, 4242);
  EXPECT_EQ(info.ppid, 17);
  EXPECT_EQ(info.cpu_ticks, 168u);
  EXPECT_EQ(info.rss_pages, 777u);
  EXPECT_FALSE(ParseProcStat("garbage", &info));
}

TEST(ProcessTreeTest, ThisProcessIsInItsOwnTree) {
  std::vector<ProcessInfo> all = ReadProcesses();
  std::vector<ProcessInfo> tree = ProcessTree(all, getpid());
  ASSERT_FALSE(tree.empty());
  EXPECT_EQ(tree[0].pid, getpid());
  EXPECT_TRUE(ProcessTree(all, 999999999).empty());
}

}  // namespace
}  // namespace fleetplan
