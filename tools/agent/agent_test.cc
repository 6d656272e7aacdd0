// Runs the fleetplan-agent binary the way apply starts it: its subcommands
// as tools/protocol/agent_command.h writes them.

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/process/subprocess.h"
#include "tools/protocol/job_state.h"
#include "tools/secure/job_key.h"
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

  using Env = std::vector<std::pair<std::string, std::string>>;
  std::unique_ptr<Subprocess> StartAgentWith(const std::vector<std::string>& args,
                                              const Env& env = {}) {
    SubprocessOptions options;
    options.argv = {agent_};
    options.argv.insert(options.argv.end(), args.begin(), args.end());
    options.env = {{"WORLD_SIZE", "4"}};
    options.env.insert(options.env.end(), env.begin(), env.end());
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

  // A launch of this node's two ranks; the caller adds options and the
  // program.
  std::vector<std::string> Flags() {
    return {"launch", "--node=n2", "--first-rank=2", "--nproc=2", "--restarts=0",
            "--log-dir=" + dir_, "--grace-period=3s"};
  }

  // --key-file= naming a key only this user can read, as apply writes it.
  std::string KeyFlag() {
    std::string path = dir_ + "/job.key";
    EXPECT_THAT(WriteFileAtomic(path, JobKeyFileText(*MakeJobKey()), 0600), IsOk());
    return "--key-file=" + path;
  }

  absl::StatusOr<NodeJobState> Stored() {
    absl::StatusOr<std::string> json = ReadFileToString(dir_ + "/job.json");
    if (!json.ok()) return json.status();
    return JobStateFromJson(*json);
  }

  // Runs the agent with `args` to its end; returns its exit status.
  int Run(const std::vector<std::string>& args) {
    output_.clear();
    auto agent = StartAgentWith(args);
    return WaitForExit(*agent);
  }

  std::string agent_, fake_rank_, dir_, output_;
};

TEST_F(AgentTest, HelpDescribesEverySubcommand) {
  EXPECT_EQ(Run({"help"}), 0);
  EXPECT_THAT(output_, HasSubstr("fleetplan-agent launch\n      Run this node's ranks"));
  EXPECT_THAT(output_, HasSubstr("--first-rank=N"));
  EXPECT_THAT(output_, HasSubstr("fleetplan-agent relay-fetch\n"));
  EXPECT_EQ(Run({}), 2);
  EXPECT_THAT(output_, HasSubstr("fleetplan-agent session\n"));
}

TEST_F(AgentTest, ACommandLineItDoesNotTakeIsAUsageError) {
  EXPECT_EQ(Run({"--logs", "--log-dir=" + dir_, "--node=n2"}), 2);
  EXPECT_THAT(output_, HasSubstr("protocol 1"));
  EXPECT_EQ(Run({"stop", "--log-dir=" + dir_, "--node=n2"}), 2);
  EXPECT_THAT(output_, HasSubstr("stop: unknown option --node;"));
  EXPECT_EQ(Run({"logs", "--protocol=9", "--log-dir=" + dir_, "--node=n2"}), 2);
  EXPECT_THAT(output_, HasSubstr("this agent speaks protocol 2"));
}

TEST_F(AgentTest, DashedFlagsAndExitStatusOfTheFailingRank) {
  auto agent = StartAgent(Flags(), {"3", "5", "hang"});
  EXPECT_EQ(WaitForExit(*agent), 5);
  EXPECT_THAT(output_, HasSubstr("[n2/2] pid="));
  EXPECT_THAT(output_, HasSubstr("[n2/3] rank 3 failing\n"));
  for (pid_t pid : PidsAfter(output_, "pid=")) EXPECT_FALSE(ProcessRunning(pid));
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState state, Stored());
  EXPECT_EQ(state.node, "n2");
  EXPECT_EQ(state.exit_status, 5);
  EXPECT_EQ(state.failure->rank, 3);
}

TEST_F(AgentTest, MissingFlagIsAUsageError) {
  auto agent = StartAgent({"launch", "--nproc=1"}, {"-1", "0", "exit"});
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
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState state, Stored());
  EXPECT_EQ(state.phase, JobPhase::kStopped);
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
  const std::vector<std::string> verify = {"verify-tree", "--root=" + dir_ + "/tree",
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
  agent = StartAgentWith(
      {"verify-tree", "--root=" + dir_ + "/tree", "--manifest=" + dir_ + "/none"});
  EXPECT_EQ(WaitForExit(*agent), 1);
  EXPECT_THAT(output_, HasSubstr("cannot check " + dir_ + "/tree: " + dir_ + "/none"));
}

TEST_F(AgentTest, DetachedAgentOutlivesItsCallerUntilStopped) {
  std::vector<std::string> args = Flags();
  args.push_back("--detach");
  args.push_back("--run-id=r1");
  args.insert(args.end(), {"--", fake_rank_, "-1", "0", "hang"});
  // The ranks hang forever: that Run returns at all says it did not wait.
  EXPECT_EQ(Run(args), 0) << output_;
  EXPECT_THAT(output_, HasSubstr("n2: ranks started (agent "));
  EXPECT_THAT(output_, HasSubstr("run r1)"));
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState state, Stored());
  EXPECT_EQ(state.phase, JobPhase::kRunning);
  ASSERT_EQ(state.ranks.size(), 2u);
  pid_t agent_pid = state.agent_pid;
  EXPECT_TRUE(ProcessRunning(agent_pid));
  for (const RankState& rank : state.ranks) EXPECT_TRUE(ProcessRunning(rank.pid));

  // Its ranks' output is in the logs, prefixed when read back.
  // (once the rank has had time to say something).
  absl::Time deadline = absl::Now() + absl::Seconds(5);
  do {
    EXPECT_EQ(Run({"logs", "--log-dir=" + dir_, "--node=n2", "--rank=3"}), 0);
  } while (!absl::StrContains(output_, "[n2/3] pid=") && absl::Now() < deadline);
  EXPECT_THAT(output_, HasSubstr("[n2/3] pid="));
  EXPECT_THAT(output_, testing::Not(HasSubstr("[n2/2]")));

  EXPECT_EQ(Run({"stop", "--log-dir=" + dir_, "--grace-period=2s"}), 0) << output_;
  EXPECT_THAT(output_, HasSubstr("stopped run r1"));
  // stop returns once the agent has no user space left (its command line
  // is gone); the kernel may still be finishing its exit for a moment.
  EXPECT_TRUE(WaitUntilGone(agent_pid, absl::Seconds(1))) << agent_pid;
  for (const RankState& rank : state.ranks) EXPECT_TRUE(WaitUntilGone(rank.pid)) << rank.pid;
  FP_ASSERT_OK_AND_ASSIGN(state, Stored());
  EXPECT_EQ(state.phase, JobPhase::kStopped);
  // Stopping again finds nothing to do.
  EXPECT_EQ(Run({"stop", "--log-dir=" + dir_}), 0);
  EXPECT_THAT(output_, HasSubstr("nothing running"));
}

TEST_F(AgentTest, FollowingLogsEndsWithTheJobAndItsStatus) {
  std::vector<std::string> args = Flags();
  args.insert(args.end(), {"--detach", "--run-id=r2", "--", "/bin/sh", "-c",
                           "echo start $RANK; sleep $((RANK - 1)); echo end $RANK; exit $((RANK - 2))"});
  ASSERT_EQ(Run(args), 0) << output_;
  EXPECT_EQ(Run({"logs", "--follow", "--log-dir=" + dir_, "--node=n2"}), 1);
  EXPECT_THAT(output_, HasSubstr("[n2/2] start 2\n"));
  EXPECT_THAT(output_, HasSubstr("[n2/2] end 2\n"));
  EXPECT_THAT(output_, HasSubstr("[n2/3] end 3\n"));
  EXPECT_EQ(Run({"logs", "--tail=1", "--log-dir=" + dir_, "--node=n2", "--run=r2"}), 0);
  EXPECT_EQ(output_, "[n2/2] end 2\n[n2/3] end 3\n");
  EXPECT_EQ(Run({"logs", "--log-dir=" + dir_, "--node=n2", "--run=nope"}), 1);
  EXPECT_THAT(output_, HasSubstr("node 'n2' has no run nope"));
}

// As a Slurm job step's task: the word goes to the report file at once,
// and the command lasts as long as the agent, with the job's status.
TEST_F(AgentTest, AReportedLaunchSaysSoInItsFileAndStaysUntilTheJobEnds) {
  std::string report = dir_ + "/launch.report";
  std::vector<std::string> args = Flags();
  // The ranks end once the test lets them (the file `go`): the report
  // comes before that, whatever the machine's load.
  std::string go = dir_ + "/go";
  args.insert(args.end(), {"--detach", "--run-id=r3", "--", "/bin/sh", "-c",
                           "while [ ! -e " + go + " ]; do sleep 0.05; done; exit $((RANK - 2))"});
  absl::Time start = absl::Now();
  auto agent = StartAgentWith(args, {{"FLEETPLAN_LAUNCH_REPORT", report}});
  absl::StatusOr<std::string> said;
  while (!(said = ReadFileToString(report)).ok() && absl::Now() - start < absl::Seconds(60)) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_THAT(said, IsOk());
  EXPECT_THAT(*said, ::testing::StartsWith("0\nn2: ranks started (agent "));
  EXPECT_FALSE(agent->TryWait().has_value()) << "the launch returned while the agent runs";
  ASSERT_THAT(WriteFileAtomic(go, "", 0644), IsOk());
  // The job failed (rank 3's status 1) and the agent wrote it down: an
  // orderly end, not an agent's failure that the step must end everywhere.
  EXPECT_EQ(WaitForExit(*agent), 0) << output_;
  EXPECT_THAT(output_, HasSubstr("n2: the job ended failed (exit 1)"));
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState state, Stored());
  EXPECT_EQ(state.phase, JobPhase::kFailed);
  for (const RankState& rank : state.ranks) EXPECT_FALSE(ProcessRunning(rank.pid));

  // An agent killed: a bad exit, which ends the step on every node.
  std::vector<std::string> hanging = Flags();
  hanging.insert(hanging.end(), {"--detach", "--run-id=r4", "--", fake_rank_, "-1", "0", "hang"});
  ASSERT_EQ(unlink(report.c_str()), 0);
  auto killed = StartAgentWith(hanging, {{"FLEETPLAN_LAUNCH_REPORT", report}});
  while (!ReadFileToString(report).ok() && absl::Now() - start < absl::Seconds(120)) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  FP_ASSERT_OK_AND_ASSIGN(state, Stored());
  ASSERT_EQ(state.run_id, "r4");
  ASSERT_EQ(kill(state.agent_pid, SIGKILL), 0);
  EXPECT_EQ(WaitForExit(*killed), 128 + SIGKILL);
  for (const RankState& rank : state.ranks) kill(rank.pid, SIGKILL);

  // One that cannot start: its status and last words in the report.
  std::vector<std::string> failing = Flags();
  failing.insert(failing.end(), {"--detach", "--coordinator=127.0.0.1:1", KeyFlag(),
                                 "--heartbeat-timeout=1s", "--", fake_rank_, "-1", "0", "hang"});
  auto lost = StartAgentWith(failing, {{"FLEETPLAN_LAUNCH_REPORT", report}});
  EXPECT_EQ(WaitForExit(*lost), 1);
  FP_ASSERT_OK_AND_ASSIGN(std::string words, ReadFileToString(report));
  EXPECT_THAT(words, ::testing::StartsWith("1\n"));
  EXPECT_THAT(words, HasSubstr("cannot reach the coordinator"));
}

TEST_F(AgentTest, ADetachedAgentThatCannotStartSaysWhy) {
  std::vector<std::string> args = Flags();
  // A worker whose coordinator is not there.
  args.insert(args.end(), {"--detach", "--coordinator=127.0.0.1:1", KeyFlag(),
                           "--heartbeat-timeout=1s",
                           "--", fake_rank_, "-1", "0", "hang"});
  EXPECT_EQ(Run(args), 1);
  EXPECT_THAT(output_, HasSubstr("cannot reach the coordinator"));
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState state, Stored());
  EXPECT_EQ(state.phase, JobPhase::kFailed);
}

TEST_F(AgentTest, ALaunchMakesTheStateFolderTheUsersAlone) {
  // One an earlier version made 0755, tightened before anything starts.
  std::string state = dir_ + "/state";
  ASSERT_EQ(mkdir(state.c_str(), 0755), 0);
  ASSERT_EQ(chmod(state.c_str(), 0755), 0);
  std::vector<std::string> args = Flags();
  args.insert(args.end(), {"--private-dir=" + state, "--", fake_rank_, "-1", "0", "exit"});
  EXPECT_EQ(Run(args), 0) << output_;
  struct stat st;
  ASSERT_EQ(stat(state.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // One that cannot be: the launch fails and says which.
  args = Flags();
  args.insert(args.end(), {"--private-dir=" + dir_ + "/missing", "--", fake_rank_, "-1", "0",
                           "exit"});
  EXPECT_EQ(Run(args), 1);
  EXPECT_THAT(output_, HasSubstr("cannot make " + dir_ + "/missing this user's alone"));
}

TEST_F(AgentTest, AWorkerRefusesAKeyOthersCanReadOrNoKeyAtAll) {
  std::string open_key = dir_ + "/open.key";
  ASSERT_THAT(WriteFileAtomic(open_key, JobKeyFileText(*MakeJobKey()), 0644), IsOk());
  std::vector<std::string> args = Flags();
  args.insert(args.end(), {"--coordinator=127.0.0.1:1", "--key-file=" + open_key, "--",
                           fake_rank_, "-1", "0", "exit"});
  EXPECT_EQ(Run(args), 2);
  EXPECT_THAT(output_, HasSubstr("is not a file of this user's alone"));
  args = Flags();
  args.insert(args.end(), {"--coordinator=127.0.0.1:1", "--", fake_rank_, "-1", "0", "exit"});
  EXPECT_EQ(Run(args), 2);
  EXPECT_THAT(output_, HasSubstr("needs the job's key"));
}

}  // namespace
}  // namespace fleetplan
