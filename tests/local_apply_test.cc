// apply end to end on this machine: two local nodes with two ranks each.

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/apply_harness.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

// Quotes, command substitution, backquotes, a backslash, a newline, `$`.
const char kHostile[] = "it's $(touch /tmp/fp-pwned) `id` \"q\" \\n\\\n$HOME;|&";

class LocalApplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_THAT(CopyFileAtomic(Runfile("tests/testdata/rank.sh"), dir_ + "/src/rank.sh", 0755),
                IsOk());
    ASSERT_THAT(WriteFileAtomic(dir_ + "/src/weights.pt", "excluded", 0644), IsOk());
    ASSERT_THAT(MakeDirs(dir_ + "/out"), IsOk());
  }

  // `defaults`: more lines for the [defaults] table.
  std::string WriteSpec(const std::string& fail_rank, const std::string& defaults = "") {
    std::string spec = absl::StrCat(
        "name = \"e2e\"\n"
        "[defaults]\ntransport = \"local\"\n", defaults,
        "[[nodes]]\nname = \"a\"\naddress = \"127.0.0.1\"\nchief = true\nworkdir = ",
        TomlString(dir_ + "/work-a"),
        "\n[[nodes]]\nname = \"b\"\naddress = \"127.0.0.2\"\nworkdir = ",
        TomlString(dir_ + "/work-b"),
        "\n[sync]\nsource = \"src\"\nexclude = [\"*.pt\"]\n"
        "[env]\nHOSTILE = ", TomlString(kHostile), "\nFP_OUT = ", TomlString(dir_ + "/out"),
        "\nFAIL_RANK = ", TomlString(fail_rank),
        "\n[network]\nmaster_port = 29555\n"
        "[job]\nprogram = \"./rank.sh\"\nnproc_per_node = 2\n");
    std::string path = dir_ + "/cluster.toml";
    EXPECT_THAT(WriteFileAtomic(path, spec, 0644), IsOk());
    return path;
  }

  // Environment a rank recorded: NAME → value (single-line values only).
  std::map<std::string, std::string> RankEnv(int rank) {
    std::map<std::string, std::string> env;
    absl::StatusOr<std::string> text =
        ReadFileToString(absl::StrCat(dir_, "/out/rank-", rank, ".env"));
    if (!text.ok()) return env;
    for (absl::string_view line : absl::StrSplit(*text, '\n')) {
      std::vector<std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
      if (kv.size() == 2) env[kv[0]] = kv[1];
    }
    return env;
  }

  std::string dir_;
};

TEST_F(LocalApplyTest, RanksSeeWhatThePlanSaysAndReapplyChangesNothing) {
  std::string spec = WriteSpec("none");
  ToolResult plan = RunTool({"tools/fleetplan-plan", "--json", spec});
  ASSERT_EQ(plan.status, 0) << plan.output;
  nlohmann::json json = nlohmann::json::parse(plan.output);
  ASSERT_EQ(json["ranks"].size(), 4u);

  ToolResult apply = RunTool({"tools/fleetplan-apply", spec});
  ASSERT_EQ(apply.status, 0) << apply.output;

  for (const nlohmann::json& rank : json["ranks"]) {
    int r = rank["rank"].get<int>();
    std::map<std::string, std::string> seen = RankEnv(r);
    ASSERT_FALSE(seen.empty()) << "rank " << r << " did not run\n" << apply.output;
    for (const auto& [name, value] : rank["env"].items()) {
      if (name == "HOSTILE") continue;  // multi-line: checked byte for byte below
      if (value == "<run-id>") {
        // Chosen at launch: the plan shows it symbolically.
        EXPECT_THAT(seen[name], testing::MatchesRegex("[0-9]{8}T[0-9]{6}Z-[0-9]+"));
        continue;
      }
      // A path under the run's folder (TORCHELASTIC_ERROR_FILE) names it too.
      EXPECT_EQ(seen[name], absl::StrReplaceAll(value.get<std::string>(),
                                                {{"<run-id>", seen["TORCHELASTIC_RUN_ID"]}}))
          << "rank " << r << " " << name;
    }
    EXPECT_EQ(seen["RANK"], std::to_string(r));
    EXPECT_EQ(seen["WORLD_SIZE"], "4");
    EXPECT_EQ(seen["MASTER_ADDR"], "127.0.0.1");
    EXPECT_EQ(seen["MASTER_PORT"], "29555");
    FP_ASSERT_OK_AND_ASSIGN(std::string hostile,
                            ReadFileToString(absl::StrCat(dir_, "/out/hostile-", r)));
    EXPECT_EQ(hostile, kHostile);
  }
  EXPECT_EQ(RankEnv(3)["LOCAL_RANK"], "1");
  EXPECT_EQ(RankEnv(2)["GROUP_RANK"], "1");
  EXPECT_FALSE(ReadFileToString(dir_ + "/work-a/weights.pt").ok()) << "excluded";
  EXPECT_TRUE(ReadFileToString(dir_ + "/work-b/rank.sh").ok());

  ToolResult again = RunTool({"tools/fleetplan-apply", "--json", spec});
  ASSERT_EQ(again.status, 0) << again.output;
  StepEvents steps = FinishedSteps(again.output);
  EXPECT_GE(steps.finished, 8) << again.output;
  EXPECT_THAT(steps.changed, ::testing::IsEmpty());
}

TEST_F(LocalApplyTest, AFailingRankStopsEveryOtherRank) {
  std::string spec = WriteSpec("3");
  ToolResult apply = RunTool({"tools/fleetplan-apply", spec});
  EXPECT_EQ(apply.status, 3) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr("rank 3 on node 'b' failed with exit status 3"));
  // The sleeping ranks ran and are gone, with their agents.
  EXPECT_FALSE(RankEnv(0).empty());
  EXPECT_THAT(ProcessesMentioning(dir_), ::testing::IsEmpty());
}

TEST_F(LocalApplyTest, LogsFollowsADetachedJobToItsEndAndExitsWithItsStatus) {
  std::string spec = WriteSpec("3");
  ToolResult apply = RunTool({"tools/fleetplan-apply", "--detach", spec});
  ASSERT_EQ(apply.status, 0) << apply.output;
  absl::Time start = absl::Now();
  ToolResult logs = RunTool({"tools/fleetplan-logs", "--follow", spec});
  // The job's own status, as apply would have said, once every node's part
  // ended or drained (JobControl::Follow).
  EXPECT_EQ(logs.status, 3) << logs.output;
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  EXPECT_THAT(ProcessesMentioning(dir_), ::testing::IsEmpty());
}

TEST_F(LocalApplyTest, StaleSavedPlanIsRefused) {
  std::string spec = WriteSpec("none");
  std::string saved = dir_ + "/plan.json";
  ToolResult plan = RunTool({"tools/fleetplan-plan", "-out", saved, spec});
  ASSERT_EQ(plan.status, 0) << plan.output;

  ASSERT_THAT(WriteFileAtomic(dir_ + "/src/extra.txt", "new source file", 0644), IsOk());
  ToolResult sources = RunTool({"tools/fleetplan-apply", saved});
  EXPECT_EQ(sources.status, 2) << sources.output;
  EXPECT_THAT(sources.output, HasSubstr("sources under"));
  EXPECT_THAT(sources.output, HasSubstr("changed since the plan was saved"));

  ASSERT_EQ(RunTool({"tools/fleetplan-plan", "--out", saved, spec}).status, 0);
  WriteSpec("7");
  ToolResult spec_changed = RunTool({"tools/fleetplan-apply", saved});
  EXPECT_EQ(spec_changed.status, 2) << spec_changed.output;
  EXPECT_THAT(spec_changed.output, HasSubstr("the spec changed since the plan was saved"));
  EXPECT_FALSE(ReadFileToString(dir_ + "/work-a/rank.sh").ok()) << "nothing was applied";
}

TEST_F(LocalApplyTest, BadInputExitsTwo) {
  EXPECT_EQ(RunTool({"tools/fleetplan-apply", "--no-such-flag", WriteSpec("none")}).status, 2);
  ToolResult missing = RunTool({"tools/fleetplan-plan", dir_ + "/missing.toml"});
  EXPECT_EQ(missing.status, 2) << missing.output;
}

TEST_F(LocalApplyTest, ANulInTheSpecExitsTwoAndWritesNothing) {
  std::string spec = dir_ + "/nul.toml";
  ASSERT_THAT(WriteFileAtomic(spec,
                              "[[nodes]]\naddress = \"127.0.0.1\"\nworkdir = \"/tmp/x\"\n"
                              "[job]\nprogram = \"rank.sh\"\nargs = [\"\\u0000\"]\n",
                              0644),
              IsOk());
  std::string saved = dir_ + "/plan.json";
  ToolResult plan = RunTool({"tools/fleetplan-plan", "--out", saved, spec});
  EXPECT_EQ(plan.status, 2) << plan.output;
  EXPECT_THAT(plan.output, HasSubstr("nul.toml:6:9: error: job.args: contains a NUL byte"));
  EXPECT_FALSE(ReadFileToString(saved).ok()) << "--out must not be written";
  ToolResult apply = RunTool({"tools/fleetplan-apply", spec});
  EXPECT_EQ(apply.status, 2) << apply.output;
}

TEST_F(LocalApplyTest, AHangingStepIsStoppedAtTheStepTimeoutAndNothingIsLeft) {
  // Activating this venv never ends, like one on a hung network mount.
  std::string venv = dir_ + "/venv";
  ASSERT_THAT(WriteFileAtomic(venv + "/bin/hang", "#!/bin/sh\nsleep 300\n", 0755), IsOk());
  ASSERT_THAT(WriteFileAtomic(venv + "/bin/activate", venv + "/bin/hang\n", 0644), IsOk());
  std::string spec = WriteSpec("none", "python = { venv = " + TomlString(venv) + " }\n");
  absl::Time start = absl::Now();
  ToolResult apply = RunTool({"tools/fleetplan-apply", "--step-timeout=3s", spec});
  EXPECT_LT(absl::Now() - start, absl::Seconds(60));
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr("phase preflight, step check: still running after 3s "
                                      "(--step-timeout), stopped"));
  EXPECT_FALSE(ReadFileToString(dir_ + "/out/rank-0.env").ok()) << "no rank started";
  EXPECT_THAT(ProcessesMentioning(dir_), ::testing::IsEmpty());
}

TEST_F(LocalApplyTest, OneNodeAppliesAndRefreshShowsWhatApplyWouldDo) {
  // The shape of the README's demo: one node, its two ranks, the chief
  // checking its own rendezvous port.
  std::string spec = dir_ + "/one.toml";
  ASSERT_THAT(WriteFileAtomic(
                  spec,
                  absl::StrCat("name = \"one\"\n[[nodes]]\nname = \"a\"\naddress = \"127.0.0.1\"\n"
                               "transport = \"local\"\nworkdir = ",
                               TomlString(dir_ + "/work-one"),
                               "\n[sync]\nsource = \"src\"\nexclude = [\"*.pt\"]\n[env]\nFP_OUT = ",
                               TomlString(dir_ + "/out"),
                               "\nFAIL_RANK = \"none\"\n[network]\nmaster_port = 29556\n"
                               "[job]\nprogram = \"./rank.sh\"\nnproc_per_node = 2\n"),
                  0644),
              IsOk());
  ToolResult before = RunTool({"tools/fleetplan-plan", "--refresh", spec});
  ASSERT_EQ(before.status, 0) << before.output;
  EXPECT_THAT(before.output, HasSubstr("  + a  sync-tree      sync "));
  EXPECT_THAT(before.output, HasSubstr("(sends all 1 files, "));
  EXPECT_THAT(before.output,
              HasSubstr("Plan: 4 steps on 1 node, 2 ranks: 4 to add, 0 to change, 0 unchanged.\n"));

  ToolResult apply = RunTool({"tools/fleetplan-apply", spec});
  ASSERT_EQ(apply.status, 0) << apply.output;
  EXPECT_FALSE(RankEnv(0).empty());
  EXPECT_FALSE(RankEnv(1).empty());

  ToolResult after = RunTool({"tools/fleetplan-plan", "--refresh", spec});
  ASSERT_EQ(after.status, 0) << after.output;
  EXPECT_THAT(after.output,
              HasSubstr("Plan: 4 steps on 1 node, 2 ranks: 0 to add, 0 to change, 4 unchanged.\n"));

  ASSERT_THAT(WriteFileAtomic(dir_ + "/src/notes.txt", "twelve bytes", 0644), IsOk());
  ToolResult changed = RunTool({"tools/fleetplan-plan", "--refresh", "--json", spec});
  ASSERT_EQ(changed.status, 0) << changed.output;
  nlohmann::json json = nlohmann::json::parse(changed.output);
  std::vector<std::string> changes;
  for (const nlohmann::json& step : json["steps"]) {
    changes.push_back(step["phase"].get<std::string>() + " " + step["change"].get<std::string>());
  }
  EXPECT_THAT(changes, ::testing::ElementsAre("sync change", "environment unchanged",
                                              "preflight change", "launch change"));
  EXPECT_EQ(json["steps"][0]["note"], "sends 1 files, 12 bytes; removes 0");
  EXPECT_THAT(ProcessesMentioning(dir_), ::testing::IsEmpty());
}

}  // namespace
}  // namespace fleetplan
