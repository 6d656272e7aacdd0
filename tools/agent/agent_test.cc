// Runs the fleetplan-agent binary the way apply starts it.

#include <signal.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/agent/run_record.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/process/subprocess.h"
#include "tools/sync/manifest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char cwd[4096];
    ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
    agent_ = absl::StrCat(cwd, "/tools/agent/fleetplan-agent");
    fake_rank_ = absl::StrCat(cwd, "/tools/agent/testdata/fake_rank.sh");
    dir_ = MakeTempDir();
  }

  std::unique_ptr<Subprocess> StartAgent(std::vector<std::string> flags,
                                         std::vector<std::string> rank_args) {
    flags.push_back("--");
    flags.push_back(fake_rank_);
    flags.insert(flags.end(), rank_args.begin(), rank_args.end());
    return StartAgentWith(flags);
  }

  std::unique_ptr<Subprocess> StartAgentWith(const std::vector<std::string>& args) {
    SubprocessOptions options;
    options.argv = {agent_};
    options.argv.insert(options.argv.end(), args.begin(), args.end());
    options.env = {{"WORLD_SIZE", "4"}};
    options.stdin_pipe = true;
    auto agent = Subprocess::Start(options);
    EXPECT_TRUE(agent.ok()) << agent.status();
    return agent.ok() ? std::move(*agent) : nullptr;
  }

  // Pumps the agent's output until `pids` rank pids appear or it exits.
  std::vector<pid_t> WaitForRanks(Subprocess& agent, size_t pids) {
    Subprocess* all[] = {&agent};
    absl::Time deadline = absl::Now() + absl::Seconds(5);
    while (PidsAfter(output_, "pid=").size() < pids && absl::Now() < deadline &&
           !agent.TryWait().has_value()) {
      PumpOutput(all, {}, absl::Milliseconds(20),
                 [&](size_t, absl::string_view chunk) { absl::StrAppend(&output_, chunk); });
    }
    return PidsAfter(output_, "pid=");
  }

  int WaitForExit(Subprocess& agent) {
    Subprocess* all[] = {&agent};
    absl::Time deadline = absl::Now() + absl::Seconds(10);
    while ((!agent.TryWait().has_value() || agent.output_open()) &&
           absl::Now() < deadline) {
      PumpOutput(all, {}, absl::Milliseconds(20),
                 [&](size_t, absl::string_view chunk) { absl::StrAppend(&output_, chunk); });
    }
    EXPECT_TRUE(agent.exit_status().has_value()) << "agent did not exit";
    return agent.exit_status().value_or(-1);
  }

  std::vector<std::string> Flags() {
    return {"--node=n2", "--first-rank=2", "--nproc=2", "--restarts=0",
            "--log-dir=" + dir_, "--grace-period=3s"};
  }

  std::string agent_, fake_rank_, dir_, output_;
};

TEST_F(AgentTest, HelpDescribesTheFlags) {
  auto agent = StartAgent({"--help"}, {});
  WaitForExit(*agent);
  EXPECT_THAT(output_, HasSubstr("Runs this node's ranks"));
  EXPECT_THAT(output_, HasSubstr("first_rank"));
  EXPECT_THAT(output_, HasSubstr("grace_period"));
}

TEST_F(AgentTest, DashedFlagsAndExitStatusOfTheFailingRank) {
  auto agent = StartAgent(Flags(), {"3", "5", "hang"});
  EXPECT_EQ(WaitForExit(*agent), 5);
  EXPECT_THAT(output_, HasSubstr("[n2/2] pid="));
  EXPECT_THAT(output_, HasSubstr("[n2/3] rank 3 failing\n"));
  for (pid_t pid : PidsAfter(output_, "pid=")) EXPECT_FALSE(ProcessRunning(pid));
  FP_ASSERT_OK_AND_ASSIGN(std::string json, ReadFileToString(dir_ + "/result.json"));
  FP_ASSERT_OK_AND_ASSIGN(AgentResult result, ResultFromJson(json));
  EXPECT_EQ(result.node, "n2");
  EXPECT_EQ(result.status, 5);
  EXPECT_EQ(result.failed_rank, 3);
}

TEST_F(AgentTest, MissingFlagIsAUsageError) {
  auto agent = StartAgent({"--nproc=1"}, {"-1", "0", "exit"});
  EXPECT_EQ(WaitForExit(*agent), 2);
  EXPECT_THAT(output_, HasSubstr("--node is required"));
}

TEST_F(AgentTest, SigtermStopsEveryRank) {
  auto agent = StartAgent(Flags(), {"-1", "0", "hang"});
  std::vector<pid_t> pids = WaitForRanks(*agent, 2);
  ASSERT_EQ(pids.size(), 2u) << output_;
  kill(agent->pid(), SIGTERM);
  EXPECT_EQ(WaitForExit(*agent), 128 + SIGTERM);
  EXPECT_THAT(output_, HasSubstr("[n2] agent: signalled; stopping all ranks"));
  for (pid_t pid : pids) EXPECT_FALSE(ProcessRunning(pid));
  EXPECT_EQ(access((dir_ + "/result.json").c_str(), F_OK), 0);
}

TEST_F(AgentTest, StdinEndOfFileStopsEveryRank) {
  auto agent = StartAgent(Flags(), {"-1", "0", "hang"});
  std::vector<pid_t> pids = WaitForRanks(*agent, 2);
  ASSERT_EQ(pids.size(), 2u) << output_;
  agent->CloseStdin();
  EXPECT_EQ(WaitForExit(*agent), 128 + SIGTERM);
  for (pid_t pid : pids) EXPECT_FALSE(ProcessRunning(pid));
}

TEST_F(AgentTest, RanksDieWithAKilledAgent) {
  auto agent = StartAgent(Flags(), {"-1", "0", "hang"});
  std::vector<pid_t> pids = WaitForRanks(*agent, 2);
  ASSERT_EQ(pids.size(), 2u) << output_;
  // Only the agent: its ranks lead their own process groups.
  kill(agent->pid(), SIGKILL);
  EXPECT_EQ(WaitForExit(*agent), 128 + SIGKILL);
  for (pid_t pid : pids) EXPECT_TRUE(WaitUntilGone(pid)) << pid;
}

TEST_F(AgentTest, VerifyTreeNamesTheFilesThatDifferFromTheManifest) {
  ASSERT_THAT(WriteFileAtomic(dir_ + "/tree/a.txt", "alpha", 0644), IsOk());
  ASSERT_THAT(WriteFileAtomic(dir_ + "/tree/bin/run", "#!/bin/sh\n", 0755), IsOk());
  FP_ASSERT_OK_AND_ASSIGN(Manifest manifest, BuildManifest(dir_ + "/tree", {}));
  ASSERT_THAT(WriteFileAtomic(dir_ + "/manifest", SerializeManifest(manifest), 0644), IsOk());
  const std::vector<std::string> verify = {"--verify-tree=" + dir_ + "/tree",
                                           "--manifest=" + dir_ + "/manifest"};
  auto agent = StartAgentWith(verify);
  EXPECT_EQ(WaitForExit(*agent), 0) << output_;
  EXPECT_EQ(output_, "2 files as listed\n");

  output_.clear();
  ASSERT_THAT(WriteFileAtomic(dir_ + "/tree/a.txt", "ALPHA", 0644), IsOk());
  agent = StartAgentWith(verify);
  EXPECT_EQ(WaitForExit(*agent), 1);
  EXPECT_EQ(output_, "1 of 2 files differ from what was sent: a.txt\n");

  output_.clear();
  agent = StartAgentWith({"--verify-tree=" + dir_ + "/tree", "--manifest=" + dir_ + "/none"});
  EXPECT_EQ(WaitForExit(*agent), 1);
  EXPECT_THAT(output_, HasSubstr("cannot check " + dir_ + "/tree: " + dir_ + "/none"));
}

}  // namespace
}  // namespace fleetplan
