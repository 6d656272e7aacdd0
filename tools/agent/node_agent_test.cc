#include "tools/agent/node_agent.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <deque>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/agent/test_ports.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/agent/peer_channel.h"
#include "tools/agent/sockets.h"
#include "tools/util/status_matchers.h"
#include "tools/secure/testing.h"

namespace fleetplan {
namespace {

// A silent peer's wait: until the agent under test has ended (`over`), at
// most `most`, so that a case does not sleep on after its answer came.
void SilentUntil(const std::atomic<bool>& over, absl::Duration most) {
  for (absl::Time end = absl::Now() + most; !over && absl::Now() < end;) {
    absl::SleepFor(absl::Milliseconds(20));
  }
}

using ::testing::HasSubstr;
using ::testing::Not;

JobKey TestKey(uint8_t fill = 42) { return TestJobKey(fill); }

// A peer that holds the job's key (or another one): the TLS side of the
// supervision channel as the agents speak it.
std::shared_ptr<TlsEndpoint> PeerEndpoint(TlsEndpoint::Side side, uint8_t key = 42) {
  return *TlsEndpoint::Make(side, TestKey(key), kSupervisionPurpose);
}

// Accepts one connection on `listener` and completes the coordinator's
// side of the handshake; what the peer said right after it goes to `said`.
std::unique_ptr<PeerChannel> AcceptProven(int listener, std::vector<PeerMessage>* said = nullptr) {
  int fd = accept(listener, nullptr, nullptr);
  auto channel = std::make_unique<PeerChannel>(Fd(fd), PeerEndpoint(TlsEndpoint::Side::kServer),
                                               absl::Now());
  absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (!channel->authenticated() && !channel->closed() && absl::Now() < deadline) {
    pollfd pfd{channel->fd(), POLLIN, 0};
    poll(&pfd, 1, 50);
    std::vector<PeerMessage> messages = channel->Receive(absl::Now());
    if (said != nullptr) said->insert(said->end(), messages.begin(), messages.end());
  }
  return channel;
}

// A socket listening on 127.0.0.1:`port`, standing in for a coordinator;
// -1 when it cannot.
int ListenOnLoopback(int port) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(listener, 16) != 0) {
    close(listener);
    return -1;
  }
  return listener;
}

class NodeAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    out_path_ = dir_ + "/out.txt";
    out_fd_ = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(out_fd_, 0);
    setenv("WORLD_SIZE", "8", 1);  // inherited by every rank
    char cwd[4096];
    ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
    fake_rank_ = absl::StrCat(cwd, "/tools/agent/testdata/fake_rank.sh");
  }
  void TearDown() override { close(out_fd_); }

  NodeAgentOptions Options(int nproc, std::vector<std::string> args) {
    NodeAgentOptions options;
    options.request.node = "n1";
    options.request.first_rank = 4;
    options.request.nproc = nproc;
    options.request.log_dir = dir_ + "/logs";
    options.request.grace_period = absl::Seconds(5);
    options.request.program = {fake_rank_};
    options.request.program.insert(options.request.program.end(), args.begin(), args.end());
    options.stdin_fd = -1;
    options.output_fd = out_fd_;
    return options;
  }

  std::string Output() { return ReadFileToString(out_path_).value_or(""); }
  absl::StatusOr<NodeJobState> Stored() {
    absl::StatusOr<std::string> json = ReadFileToString(dir_ + "/logs/job.json");
    if (!json.ok()) return json.status();
    return JobStateFromJson(*json);
  }

  std::string dir_, out_path_, fake_rank_;
  int out_fd_ = -1;
};

TEST_F(NodeAgentTest, AllRanksSucceedWithPrefixedOutputLogsAndResult) {
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState result,
                          RunNodeAgent(Options(3, {"-1", "0", "exit"})));
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_EQ(result.phase, JobPhase::kSucceeded);
  EXPECT_FALSE(result.failure.has_value());
  EXPECT_EQ(result.generation, 0);
  std::string out = Output();
  for (int i = 0; i < 3; ++i) {
    int rank = 4 + i;
    EXPECT_THAT(out, HasSubstr(absl::StrCat("[n1/", rank, "] pid=")));
    EXPECT_THAT(out, HasSubstr(absl::StrCat(" rank=", rank, " local_rank=", i, " world=8\n")));
    EXPECT_THAT(out, HasSubstr(absl::StrCat("[n1/", rank, "] partial from ", rank,
                                            " ...done\n")));
    FP_ASSERT_OK_AND_ASSIGN(
        std::string log,
        ReadFileToString(absl::StrCat(dir_, "/logs/latest/rank-", rank, ".log")));
    EXPECT_THAT(log, HasSubstr(absl::StrCat("rank=", rank, " local_rank=", i)));
    EXPECT_THAT(log, Not(HasSubstr("[n1/"))) << "logs keep the raw output";
  }
  // Every line of stdout is a whole, prefixed line.
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    EXPECT_TRUE(absl::StartsWith(line, "[n1/")) << line;
  }
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState stored, Stored());
  EXPECT_EQ(stored.node, "n1");
  EXPECT_TRUE(stored.coordinator);
  EXPECT_EQ(stored.phase, JobPhase::kSucceeded);
  EXPECT_EQ(stored.exit_status, 0);
  EXPECT_EQ(stored.run_id, result.run_id);
  ASSERT_EQ(stored.ranks.size(), 3u);
  EXPECT_EQ(stored.ranks[2].rank, 6);
  EXPECT_EQ(stored.ranks[2].status, 0);
  EXPECT_NE(stored.ended_at, absl::InfinitePast());
  EXPECT_EQ(access((dir_ + "/logs/" + result.run_id + "/rank-6.log").c_str(), F_OK), 0);
}

// Ranks that sleep (no output, no CPU time) past the hang timeout: the job
// fails with 124 and where each rank stood, every stack in a file beside
// the rank logs; a missing stack tool is a named skip.
TEST_F(NodeAgentTest, RanksWithoutProgressHangTheJobWithTheirStacks) {
  NodeAgentOptions options = Options(3, {"none", "0", "hang"});
  options.request.hang_timeout = absl::Seconds(2);
  options.stack_tools.gdb = {"fleetplan-no-such-gdb"};
  absl::Time start = absl::Now();
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState result, RunNodeAgent(options));
  EXPECT_LT(absl::Now() - start, absl::Seconds(40));
  EXPECT_GT(absl::Now() - start, absl::Seconds(2));
  EXPECT_EQ(result.phase, JobPhase::kFailed);
  EXPECT_EQ(result.exit_status, 124);
  ASSERT_TRUE(result.failure.has_value());
  ASSERT_TRUE(result.failure->stacks.has_value());
  std::string described = DescribeFailureInFull(*result.failure);
  EXPECT_THAT(described, HasSubstr("the job hung: no rank made progress for 2s"));
  EXPECT_THAT(described, HasSubstr("ranks 4-6 on n1: "));
  // sleep is no Python program: gdb is not even tried, so its absence is
  // no skip; eu-stack read every rank.
  EXPECT_THAT(described, Not(HasSubstr("skip on")));
  EXPECT_THAT(Output(), HasSubstr("collecting every rank's stacks"));
  for (int rank = 4; rank <= 6; ++rank) {
    FP_ASSERT_OK_AND_ASSIGN(std::string stacks,
                            ReadFileToString(absl::StrCat(dir_, "/logs/latest/rank-", rank,
                                                          ".stacks-0.txt")));
    EXPECT_THAT(stacks, HasSubstr("native frames of every thread (eu-stack)"));
    EXPECT_THAT(stacks, HasSubstr("nanosleep"));
  }
}

TEST_F(NodeAgentTest, AHungJobNamesAStackToolThatIsMissing) {
  NodeAgentOptions options = Options(2, {"none", "0", "hang"});
  options.request.hang_timeout = absl::Seconds(2);
  options.stack_tools.eu_stack = {"fleetplan-no-such-eu-stack"};
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState result, RunNodeAgent(options));
  EXPECT_EQ(result.exit_status, 124);
  ASSERT_TRUE(result.failure.has_value());
  EXPECT_THAT(DescribeFailureInFull(*result.failure),
              HasSubstr("\n  ranks 4,5 on n1: no frame of the user's found\n"
                        "  skip on n1 (ranks 4,5): native: fleetplan-no-such-eu-stack was not "
                        "found on PATH"));
}

TEST_F(NodeAgentTest, OneFailingRankStopsTheOthers) {
  absl::Time start = absl::Now();
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState result,
                          RunNodeAgent(Options(3, {"5", "3", "hang"})));
  EXPECT_LT(absl::Now() - start, absl::Seconds(4)) << "SIGTERM, not the grace period";
  EXPECT_EQ(result.exit_status, 3);
  ASSERT_TRUE(result.failure.has_value());
  EXPECT_EQ(DescribeFailure(*result.failure), "rank 5 on node 'n1' failed with exit status 3");
  std::string out = Output();
  std::vector<pid_t> pids = PidsAfter(out, "pid=");
  ASSERT_EQ(pids.size(), 3u) << out;
  for (pid_t pid : pids) EXPECT_FALSE(ProcessRunning(pid)) << pid;
  EXPECT_THAT(out, HasSubstr("[n1/5] rank 5 failing\n"));
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState stored, Stored());
  EXPECT_EQ(stored.phase, JobPhase::kFailed);
  EXPECT_EQ(stored.exit_status, 3);
  EXPECT_EQ(stored.failure->rank, 5);
  // No error file written: the rank's last lines.
  ASSERT_TRUE(stored.failure->error.has_value());
  EXPECT_THAT(stored.failure->error->log_tail, testing::EndsWith("rank 5 failing"));
}

TEST_F(NodeAgentTest, AFailedRanksRecordedExceptionIsInTheFailure) {
  setenv("FAKE_EXCEPTION", "ValueError: bad shard 7", 1);
  absl::StatusOr<NodeJobState> result = RunNodeAgent(Options(3, {"5", "3", "hang"}));
  unsetenv("FAKE_EXCEPTION");
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(DescribeFailure(*result->failure),
            "rank 5 on node 'n1' failed with exit status 3: ValueError: bad shard 7");
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState stored, Stored());
  EXPECT_EQ(stored.failure->error->type, "ValueError");
  // Each rank's error file, private, per generation.
  struct stat st;
  ASSERT_EQ(stat(RankErrorPath(RunDir(dir_ + "/logs", stored.run_id), 4, 0).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
}

TEST_F(NodeAgentTest, RankKilledBySignalGives128PlusSignal) {
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState result,
                          RunNodeAgent(Options(2, {"4", "kill", "hang"})));
  EXPECT_EQ(result.exit_status, 128 + 9);
  EXPECT_EQ(result.failure->rank, 4);
}

TEST_F(NodeAgentTest, RestartsTheWholeSetUpToTheLimit) {
  NodeAgentOptions options = Options(2, {"5", "7", "exit"});
  options.request.restarts = 2;
  options.restart_backoff = absl::Milliseconds(10);
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState result, RunNodeAgent(options));
  EXPECT_EQ(result.exit_status, 7);
  EXPECT_EQ(result.failure->rank, 5);
  EXPECT_EQ(result.generation, 2);
  std::string out = Output();
  EXPECT_THAT(out, HasSubstr("restarting all ranks (restart 1 of 2: rank 5 on node 'n1' "
                             "failed with exit status 7)"));
  EXPECT_THAT(out, HasSubstr("restarting all ranks (restart 2 of 2"));
  EXPECT_EQ(PidsAfter(out, "pid=").size(), 6u) << "3 attempts of 2 ranks";
  FP_ASSERT_OK_AND_ASSIGN(std::string log,
                          ReadFileToString(dir_ + "/logs/latest/rank-4.log"));
  EXPECT_THAT(log, HasSubstr("--- restart 2 of 2 (rank 5 on node 'n1' failed with exit status 7) ---"));
}

TEST_F(NodeAgentTest, ARestartCanSucceed) {
  NodeAgentOptions options = Options(2, {"4", "1", "exit", dir_ + "/failed-once"});
  options.request.restarts = 3;
  options.restart_backoff = absl::Milliseconds(10);
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState result, RunNodeAgent(options));
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_FALSE(result.failure.has_value());
  EXPECT_EQ(result.generation, 1);
}

TEST_F(NodeAgentTest, StdinEndOfFileStopsEveryRank) {
  int in[2];
  ASSERT_EQ(pipe2(in, O_CLOEXEC), 0);
  NodeAgentOptions options = Options(2, {"-1", "0", "hang"});
  options.stdin_fd = in[0];
  absl::StatusOr<NodeJobState> result;
  std::thread agent([&] { result = RunNodeAgent(options); });
  absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (PidsAfter(Output(), "pid=").size() < 2 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  std::vector<pid_t> pids = PidsAfter(Output(), "pid=");
  ASSERT_EQ(pids.size(), 2u);
  ASSERT_EQ(write(in[1], "x", 1), 1);  // input alone does not stop it
  absl::SleepFor(absl::Milliseconds(150));
  for (pid_t pid : pids) EXPECT_TRUE(ProcessRunning(pid));
  close(in[1]);
  agent.join();
  close(in[0]);
  ASSERT_THAT(result, IsOk());
  for (pid_t pid : pids) EXPECT_FALSE(ProcessRunning(pid));
  EXPECT_EQ(result->exit_status, 128 + 15);
  EXPECT_EQ(result->phase, JobPhase::kStopped);
  EXPECT_THAT(Output(), HasSubstr("[n1] agent: stdin closed; stopping all ranks\n"));
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState stored, Stored());
  EXPECT_EQ(stored.phase, JobPhase::kStopped);
}

TEST_F(NodeAgentTest, MissingProgramIsAFailedRank) {
  NodeAgentOptions options = Options(2, {});
  options.request.program = {dir_ + "/no-such-program"};
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState result, RunNodeAgent(options));
  EXPECT_EQ(result.exit_status, 127);
  EXPECT_EQ(result.failure->rank, 4);
}

TEST_F(NodeAgentTest, BadOptionsAreInvalidArgument) {
  NodeAgentOptions options = Options(0, {});
  EXPECT_THAT(RunNodeAgent(options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--nproc")));
  options = Options(1, {});
  options.request.program.clear();
  EXPECT_THAT(RunNodeAgent(options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("program")));
}

TEST_F(NodeAgentTest, RestartedRanksSeeTorchrunsRestartCountAndRunId) {
  std::string program = dir_ + "/env_rank.sh";
  ASSERT_THAT(WriteFileAtomic(program,
                              "#!/bin/sh\n"
                              "echo \"restart=$TORCHELASTIC_RESTART_COUNT "
                              "max=$TORCHELASTIC_MAX_RESTARTS run=$TORCHELASTIC_RUN_ID\"\n"
                              "[ \"$TORCHELASTIC_RESTART_COUNT\" = 1 ] || exit 3\n",
                              0755),
              IsOk());
  NodeAgentOptions options = Options(1, {});
  options.request.program = {program};
  options.request.restarts = 1;
  options.request.run_id = "run-7";
  options.restart_backoff = absl::Milliseconds(10);
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState result, RunNodeAgent(options));
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_THAT(Output(), HasSubstr("[n1/4] restart=0 max=1 run=run-7\n"));
  EXPECT_THAT(Output(), HasSubstr("[n1/4] restart=1 max=1 run=run-7\n"));
}

TEST_F(NodeAgentTest, RanksSeeOnlyTheirLaunchersVariablesAndArgument) {
  std::string program = dir_ + "/launcher_rank.sh";
  ASSERT_THAT(WriteFileAtomic(program,
                              "#!/bin/sh\n"
                              "echo \"args=$* ompi=${OMPI_COMM_WORLD_RANK-unset}/"
                              "${OMPI_COMM_WORLD_LOCAL_RANK-unset} rank=${RANK-unset} "
                              "elastic=${TORCHELASTIC_RUN_ID-unset}\"\n",
                              0755),
              IsOk());
  NodeAgentOptions options = Options(2, {});
  options.request.program = {program, "--epochs=1"};
  options.request.run_id = "run-9";
  options.request.launcher = {Launcher::kMpirun, ""};
  FP_ASSERT_OK_AND_ASSIGN(NodeJobState result, RunNodeAgent(options));
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_THAT(Output(), HasSubstr("[n1/5] args=--epochs=1 ompi=5/1 rank=unset elastic=unset\n"));

  options.request.launcher = {Launcher::kDistributedLaunch, "--local_rank"};
  FP_ASSERT_OK_AND_ASSIGN(result, RunNodeAgent(options));
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_THAT(Output(), HasSubstr("[n1/5] args=--local_rank=1 --epochs=1 ompi=unset/unset "
                                  "rank=5 elastic=run-9\n"));
}

// Three agents of one job in this process: a coordinator ("a", ranks 0-1)
// and two workers ("b" rank 2, "c" rank 3), each with its own log folder.
class JobTest : public NodeAgentTest {
 protected:
  NodeAgentOptions Node(const std::string& name, int first_rank, int nproc,
                        std::vector<std::string> args) {
    NodeAgentOptions options = Options(nproc, std::move(args));
    options.request.node = name;
    options.request.first_rank = first_rank;
    options.request.log_dir = absl::StrCat(dir_, "/", name);
    options.request.supervision.heartbeat_timeout = absl::Seconds(3);
    options.restart_backoff = absl::Milliseconds(50);
    options.request.run_id = "job-1";
    options.job_key = TestKey();
    if (name == "a") {
      options.request.supervision.nodes = {"a", "b", "c"};
      options.request.supervision.supervisor_port = port_;
    } else {
      options.request.supervision.coordinator = absl::StrCat("127.0.0.1:", port_);
    }
    return options;
  }

  // Runs the three to their end.
  std::map<std::string, NodeJobState> RunJob(std::vector<NodeAgentOptions> nodes) {
    std::map<std::string, absl::StatusOr<NodeJobState>> results;
    std::vector<std::thread> threads;
    for (const NodeAgentOptions& node : nodes) {
      results.emplace(node.request.node, absl::UnknownError(""));
    }
    for (const NodeAgentOptions& node : nodes) {
      threads.emplace_back(
          [&results, &node] { results.at(node.request.node) = RunNodeAgent(node); });
    }
    for (std::thread& thread : threads) thread.join();
    std::map<std::string, NodeJobState> states;
    for (auto& [name, result] : results) {
      EXPECT_TRUE(result.ok()) << name << ": " << result.status();
      if (result.ok()) states[name] = *result;
    }
    return states;
  }

  int port_ = FreeLoopbackPort();
};

TEST_F(JobTest, EveryNodeSucceedsTogether) {
  auto states = RunJob({Node("a", 0, 2, {"-1", "0", "exit"}), Node("b", 2, 1, {"-1", "0", "exit"}),
                        Node("c", 3, 1, {"-1", "0", "exit"})});
  for (const auto& [name, state] : states) {
    EXPECT_EQ(state.phase, JobPhase::kSucceeded) << name;
    EXPECT_EQ(state.exit_status, 0) << name;
    EXPECT_EQ(state.run_id, "job-1");
  }
  EXPECT_TRUE(states["a"].coordinator);
  EXPECT_FALSE(states["b"].coordinator);
  EXPECT_THAT(ReadFileToString(dir_ + "/c/job-1/rank-3.log").value_or(""), HasSubstr("rank=3"));
}

TEST_F(JobTest, ARankFailingOnAWorkerStopsEveryNodeAtOnce) {
  absl::Time start = absl::Now();
  // Rank 3 on c fails; every other rank would hang for 1000 s.
  auto states = RunJob({Node("a", 0, 2, {"3", "9", "hang"}), Node("b", 2, 1, {"3", "9", "hang"}),
                        Node("c", 3, 1, {"3", "9", "hang"})});
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  for (const auto& [name, state] : states) {
    EXPECT_EQ(state.phase, JobPhase::kFailed) << name;
    EXPECT_EQ(state.exit_status, 9) << name;
    ASSERT_TRUE(state.failure.has_value()) << name;
    EXPECT_EQ(DescribeFailure(*state.failure), "rank 3 on node 'c' failed with exit status 9");
    // Read on c, told to the coordinator, written down everywhere.
    ASSERT_TRUE(state.failure->error.has_value()) << name;
    EXPECT_THAT(state.failure->error->log_tail, testing::EndsWith("rank 3 failing")) << name;
  }
  for (pid_t pid : PidsAfter(Output(), "pid=")) EXPECT_FALSE(ProcessRunning(pid)) << pid;
}

TEST_F(JobTest, AWholeJobRestartRestartsEveryNodesRanks) {
  std::string once = dir_ + "/failed-once";
  std::vector<NodeAgentOptions> nodes = {Node("a", 0, 2, {"2", "4", "exit", once}),
                                         Node("b", 2, 1, {"2", "4", "exit", once}),
                                         Node("c", 3, 1, {"2", "4", "exit", once})};
  for (NodeAgentOptions& node : nodes) node.request.restarts = 1;
  auto states = RunJob(nodes);
  for (const auto& [name, state] : states) {
    EXPECT_EQ(state.phase, JobPhase::kSucceeded) << name;
    EXPECT_EQ(state.generation, 1) << name;
  }
  // Every rank ran twice, on every node.
  EXPECT_EQ(PidsAfter(Output(), "pid=").size(), 8u);
  EXPECT_THAT(ReadFileToString(dir_ + "/c/job-1/rank-3.log").value_or(""),
              HasSubstr("--- restart 1 of 1 (rank 2 on node 'b' failed with exit status 4) ---"));
}

TEST_F(JobTest, AWorkerThatNeverComesFailsTheJobNamingIt) {
  NodeAgentOptions a = Node("a", 0, 1, {"-1", "0", "hang"});
  a.request.supervision.heartbeat_timeout = absl::Seconds(1);
  auto states = RunJob({a, Node("b", 2, 1, {"-1", "0", "hang"})});
  EXPECT_EQ(states["a"].phase, JobPhase::kFailed);
  EXPECT_EQ(DescribeFailure(*states["a"].failure),
            "node 'c' failed: its agent did not reach the coordinator within 1s");
  EXPECT_EQ(states["b"].phase, JobPhase::kFailed);
}

// A worker whose coordinator falls silent (a partition) stops its ranks
// within the heartbeat timeout.
TEST_F(JobTest, AWorkerCutOffFromTheCoordinatorStopsItsRanks) {
  int listener = ListenOnLoopback(port_);
  ASSERT_GE(listener, 0);
  std::atomic<bool> silence_over{false};
  std::thread silent([&] {
    // Welcomes and starts the worker, then says nothing more.
    std::unique_ptr<PeerChannel> channel = AcceptProven(listener);
    ASSERT_TRUE(channel->authenticated());
    channel->Send(WelcomeMessage{"job-1", "a"});
    channel->Send(StartMessage{0, ""});
    channel->Flush(absl::Seconds(1));
    SilentUntil(silence_over, absl::Seconds(6));
  });
  NodeAgentOptions b = Node("b", 2, 2, {"-1", "0", "hang"});
  absl::Time start = absl::Now();
  absl::StatusOr<NodeJobState> state = RunNodeAgent(b);
  silence_over = true;
  absl::Duration took = absl::Now() - start;
  silent.join();
  close(listener);
  ASSERT_THAT(state, IsOk());
  EXPECT_GE(took, absl::Seconds(3));
  EXPECT_LT(took, absl::Seconds(5));
  EXPECT_EQ(state->phase, JobPhase::kFailed);
  EXPECT_THAT(state->failure->reason, HasSubstr("no heartbeat for 3s"));
  std::vector<pid_t> pids = PidsAfter(Output(), "pid=");
  EXPECT_EQ(pids.size(), 2u);
  for (pid_t pid : pids) EXPECT_FALSE(ProcessRunning(pid)) << pid;
}

// A coordinator that loses a worker (silent past the timeout) stops the job.
TEST_F(JobTest, ACoordinatorThatLosesAWorkerStopsTheJob) {
  NodeAgentOptions a = Node("a", 0, 1, {"-1", "0", "hang"});
  a.request.supervision.nodes = {"a", "b"};
  std::atomic<bool> silence_over{false};
  std::thread silent_worker([&] {
    absl::StatusOr<Connected> connected =
        ConnectWithRetry(absl::StrCat("127.0.0.1:", port_), absl::Seconds(5));
    ASSERT_THAT(connected, IsOk());
    PeerChannel channel(std::move(connected->fd), PeerEndpoint(TlsEndpoint::Side::kClient),
                        absl::Now());
    ASSERT_THAT(channel.HandshakeBy(absl::Now() + absl::Seconds(5)), IsOk());
    channel.Send(HelloMessage{"b"});
    channel.Send(StartedMessage{0});
    channel.Flush(absl::Seconds(1));
    SilentUntil(silence_over, absl::Seconds(6));
  });
  absl::Time start = absl::Now();
  absl::StatusOr<NodeJobState> state = RunNodeAgent(a);
  silence_over = true;
  absl::Duration took = absl::Now() - start;
  silent_worker.join();
  ASSERT_THAT(state, IsOk());
  EXPECT_LT(took, absl::Seconds(5));
  EXPECT_EQ(state->phase, JobPhase::kFailed);
  EXPECT_EQ(DescribeFailure(*state->failure), "node 'b' failed: no heartbeat for 3s");
}

// Strangers on the nodes' network: plain-text hellos naming every worker
// and a stop, connections made with another key, and silent connections
// beyond the pending limit, all racing the real workers from before the
// coordinator listens. None of it counts: the job runs on every node and
// succeeds, and the coordinator said it refused them.
TEST_F(JobTest, StrangersRacingTheWorkersCannotTakeTheirPlaceOrStopTheJob) {
  std::atomic<bool> done{false};
  std::vector<std::thread> strangers;
  for (const char* name : {"b", "c"}) {
    strangers.emplace_back([&, name] {
      while (!done) {
        absl::StatusOr<Connected> connected =
            ConnectWithRetry(absl::StrCat("127.0.0.1:", port_), absl::Seconds(1));
        if (!connected.ok()) continue;
        std::string lies = absl::StrCat("{\"t\":\"hello\",\"node\":\"", name,
                                        "\"}\n{\"t\":\"stop\"}\n");
        send(connected->fd.get(), lies.data(), lies.size(), MSG_NOSIGNAL);
        absl::SleepFor(absl::Milliseconds(5));
      }
    });
  }
  strangers.emplace_back([&] {
    while (!done) {
      absl::StatusOr<Connected> connected =
          ConnectWithRetry(absl::StrCat("127.0.0.1:", port_), absl::Seconds(1));
      if (!connected.ok()) continue;
      PeerChannel channel(std::move(connected->fd), PeerEndpoint(TlsEndpoint::Side::kClient, 7),
                          absl::Now());
      channel.Send(HelloMessage{"c"});
      EXPECT_FALSE(channel.HandshakeBy(absl::Now() + absl::Seconds(2)).ok());
    }
  });
  std::vector<Fd> silent;
  strangers.emplace_back([&] {
    // More silent connections than the coordinator keeps pending.
    for (int i = 0; i < 40 && !done; ++i) {
      absl::StatusOr<Connected> connected =
          ConnectWithRetry(absl::StrCat("127.0.0.1:", port_), absl::Seconds(2));
      if (connected.ok()) silent.push_back(std::move(connected->fd));
    }
  });
  absl::SleepFor(absl::Milliseconds(100));  // the strangers come first
  auto states = RunJob({Node("a", 0, 1, {"-1", "0", "exit"}), Node("b", 1, 1, {"-1", "0", "exit"}),
                        Node("c", 2, 1, {"-1", "0", "exit"})});
  done = true;
  for (std::thread& stranger : strangers) stranger.join();
  for (const auto& [name, state] : states) {
    EXPECT_EQ(state.phase, JobPhase::kSucceeded)
        << name << ": " << (state.failure ? DescribeFailure(*state.failure) : "");
  }
  EXPECT_THAT(Output(), HasSubstr("refused a connection to the supervisor port"));
  EXPECT_THAT(Output(), Not(HasSubstr("asks to stop the job")));
}

TEST_F(JobTest, AJobOfSeveralNodesWithoutAKeyIsRefused) {
  NodeAgentOptions b = Node("b", 1, 1, {"-1", "0", "exit"});
  b.job_key.reset();
  EXPECT_THAT(RunNodeAgent(b), StatusIs(absl::StatusCode::kInvalidArgument));
}

// A worker of an elastic job played by the test: it proves the key, says
// hello as `node`, and answers as the test tells it.
class FakeWorker {
 public:
  FakeWorker(int port, const std::string& node) {
    absl::StatusOr<Connected> connected =
        ConnectWithRetry(absl::StrCat("127.0.0.1:", port), absl::Seconds(5));
    EXPECT_THAT(connected, IsOk());
    if (!connected.ok()) return;
    channel_ = std::make_unique<PeerChannel>(std::move(connected->fd),
                                             PeerEndpoint(TlsEndpoint::Side::kClient),
                                             absl::Now());
    EXPECT_THAT(channel_->HandshakeBy(absl::Now() + absl::Seconds(5)), IsOk());
    channel_->Send(HelloMessage{node, 1});
    channel_->Flush(absl::Seconds(1));
  }

  // The next message of type T within `timeout` (those before it are
  // passed over), heartbeats sent meanwhile.
  template <typename T>
  std::optional<T> Await(absl::Duration timeout) {
    absl::Time deadline = absl::Now() + timeout;
    while (channel_ != nullptr && absl::Now() < deadline) {
      while (!pending_.empty()) {
        PeerMessage message = std::move(pending_.front());
        pending_.pop_front();
        if (auto* wanted = std::get_if<T>(&message)) return *wanted;
      }
      if (channel_->closed()) break;
      pollfd pfd{channel_->fd(), POLLIN, 0};
      poll(&pfd, 1, 100);
      for (PeerMessage& message : channel_->Receive(absl::Now())) {
        pending_.push_back(std::move(message));
      }
      channel_->Send(HeartbeatMessage{});
    }
    return std::nullopt;
  }

  void Send(const PeerMessage& message) {
    channel_->Send(message);
    channel_->Flush(absl::Seconds(1));
  }

 private:
  std::unique_ptr<PeerChannel> channel_;
  std::deque<PeerMessage> pending_;
};

// Each rank says where it stands in its generation; every rank of a
// generation after the first ends well, those of the first run on.
std::string GenerationRank(const std::string& dir, int ends_in = 1) {
  std::string program = dir + "/generation_rank.sh";
  std::string text = absl::StrCat(
      "#!/bin/sh\n"
      "echo \"rank=$RANK of $WORLD_SIZE restart=$TORCHELASTIC_RESTART_COUNT "
      "group=$GROUP_RANK/$GROUP_WORLD_SIZE local=$LOCAL_RANK/$LOCAL_WORLD_SIZE\"\n"
      "[ \"$TORCHELASTIC_RESTART_COUNT\" -ge ",
      ends_in, " ] && exit 0\nexec sleep 1000\n");
  EXPECT_THAT(WriteFileAtomic(program, text, 0755), IsOk());
  return program;
}

// min_nodes = 2 of a, b, c: c falls silent mid-run, and the job goes on
// as a second generation on a and b, its ranks renumbered, costing no
// restart.
TEST_F(JobTest, AnElasticJobGoesOnWithoutALostWorker) {
  std::string program = GenerationRank(dir_);
  NodeAgentOptions a = Node("a", 0, 2, {});
  a.request.program = {program};
  a.request.supervision.elastic.min_nodes = 2;
  NodeAgentOptions b = Node("b", 2, 1, {});
  b.request.program = {program};
  b.rejoin_window = absl::Seconds(5);
  std::atomic<bool> silence_over{false};
  std::thread silent([&] {
    FakeWorker c(port_, "c");
    std::optional<StartMessage> start = c.Await<StartMessage>(absl::Seconds(5));
    ASSERT_TRUE(start.has_value());
    EXPECT_EQ(start->members.size(), 3u);
    c.Send(StartedMessage{0});
    SilentUntil(silence_over, absl::Seconds(6));  // silent: lost after 3 s
  });
  absl::Time began = absl::Now();
  auto states = RunJob({a, b});
  silence_over = true;
  silent.join();
  EXPECT_LT(absl::Now() - began, absl::Seconds(8));
  EXPECT_EQ(states["a"].phase, JobPhase::kSucceeded);
  EXPECT_EQ(states["b"].phase, JobPhase::kSucceeded);
  EXPECT_EQ(states["a"].generation, 1);
  EXPECT_EQ(states["a"].restarts_used, 0);
  EXPECT_EQ(states["a"].node_losses, 1);
  ASSERT_EQ(states["a"].lost.size(), 1u);
  EXPECT_EQ(states["a"].lost[0].node, "c");
  EXPECT_EQ(states["a"].lost[0].reason, "no heartbeat for 3s");
  ASSERT_EQ(states["a"].generations.size(), 2u);
  EXPECT_THAT(states["a"].generations[1].members, testing::ElementsAre("a", "b"));
  std::string out = Output();
  EXPECT_THAT(out, HasSubstr("[b/2] rank=2 of 4 restart=0 group=1/3 local=0/1"));
  EXPECT_THAT(out, HasSubstr("[b/2] rank=2 of 3 restart=1 group=1/2 local=0/1"));
  EXPECT_THAT(out, HasSubstr("[a/1] rank=1 of 3 restart=1 group=0/2 local=1/2"));
  EXPECT_THAT(out, HasSubstr("[b] agent: starting generation 1 on 2 nodes: lost node 'c': no "
                             "heartbeat for 3s"));
  // Each rank's log says so too, counting no restart.
  FP_ASSERT_OK_AND_ASSIGN(std::string log, ReadFileToString(dir_ + "/b/latest/rank-2.log"));
  EXPECT_THAT(log, HasSubstr("--- generation 1 on 2 nodes (lost node 'c': no heartbeat for 3s) "
                             "---"));
}

// Past max_node_losses the job fails, naming the node lost.
TEST_F(JobTest, AnElasticJobThatLosesTooManyNodesFailsNamingThem) {
  std::string program = GenerationRank(dir_);
  NodeAgentOptions a = Node("a", 0, 1, {});
  a.request.program = {program};
  a.request.supervision.nodes = {"a", "c"};
  a.request.supervision.elastic.min_nodes = 1;
  a.request.supervision.elastic.max_node_losses = 0;
  std::atomic<bool> silence_over{false};
  std::thread silent([&] {
    FakeWorker c(port_, "c");
    ASSERT_TRUE(c.Await<StartMessage>(absl::Seconds(5)).has_value());
    SilentUntil(silence_over, absl::Seconds(5));
  });
  absl::StatusOr<NodeJobState> state = RunNodeAgent(a);
  silence_over = true;
  silent.join();
  ASSERT_THAT(state, IsOk());
  EXPECT_EQ(state->phase, JobPhase::kFailed);
  EXPECT_EQ(DescribeFailure(*state->failure),
            "node 'c' failed: lost 1 node, more than max_node_losses = 0 (lost now: c)");
}

// A spare runs nothing until c is lost, then takes c's place: the world
// size stays.
TEST_F(JobTest, ASpareTakesALostWorkersPlace) {
  std::string program = GenerationRank(dir_);
  NodeAgentOptions a = Node("a", 0, 1, {});
  a.request.program = {program};
  a.request.supervision.nodes = {"a", "b", "c", "d"};
  a.request.supervision.elastic.spares = {"d"};
  NodeAgentOptions b = Node("b", 1, 1, {});
  b.request.program = {program};
  NodeAgentOptions d = Node("d", 3, 1, {});
  d.request.program = {program};
  std::atomic<bool> silence_over{false};
  std::thread silent([&] {
    FakeWorker c(port_, "c");
    ASSERT_TRUE(c.Await<StartMessage>(absl::Seconds(5)).has_value());
    c.Send(StartedMessage{0});
    SilentUntil(silence_over, absl::Seconds(6));
  });
  auto states = RunJob({a, b, d});
  silence_over = true;
  silent.join();
  for (const char* node : {"a", "b", "d"}) {
    EXPECT_EQ(states[node].phase, JobPhase::kSucceeded) << node;
  }
  std::string out = Output();
  EXPECT_THAT(out, HasSubstr("[d] agent: no rank of this node runs in generation 0"));
  EXPECT_THAT(out, Not(HasSubstr("[d/2] rank=2 of 3 restart=0")));
  // d in c's place: rank 2 of 3, as c was.
  EXPECT_THAT(out, HasSubstr("[b/1] rank=1 of 3 restart=0 group=1/3"));
  EXPECT_THAT(out, HasSubstr("[d/2] rank=2 of 3 restart=1 group=2/3"));
  EXPECT_THAT(states["a"].generations.back().members, testing::ElementsAre("a", "b", "d"));
  EXPECT_TRUE(states["a"].spares.empty());
}

// c is lost, then comes back: the job, below its full size, grows back at
// once as generation 2.
TEST_F(JobTest, ALostWorkerThatComesBackRejoins) {
  std::string program = GenerationRank(dir_, /*ends_in=*/2);
  NodeAgentOptions a = Node("a", 0, 1, {});
  a.request.program = {program};
  a.request.supervision.elastic.min_nodes = 2;
  NodeAgentOptions b = Node("b", 1, 1, {});
  b.request.program = {program};
  std::thread flaky([&] {
    {
      FakeWorker c(port_, "c");
      ASSERT_TRUE(c.Await<StartMessage>(absl::Seconds(5)).has_value());
      absl::SleepFor(absl::Seconds(4));  // lost after 3 s
    }
    FakeWorker c(port_, "c");
    ASSERT_TRUE(c.Await<WelcomeMessage>(absl::Seconds(5)).has_value());
    std::optional<StartMessage> start;
    while ((start = c.Await<StartMessage>(absl::Seconds(10))).has_value() &&
           start->generation < 2) {
    }
    ASSERT_TRUE(start.has_value());
    EXPECT_EQ(start->members.size(), 3u);
    c.Send(StartedMessage{2});
    c.Send(EndedMessage{2, {{2, 0}}, {}});
    EXPECT_TRUE(c.Await<EndMessage>(absl::Seconds(10)).has_value());
  });
  auto states = RunJob({a, b});
  flaky.join();
  EXPECT_EQ(states["a"].phase, JobPhase::kSucceeded);
  EXPECT_EQ(states["a"].generation, 2);
  EXPECT_EQ(states["a"].restarts_used, 0);
  EXPECT_THAT(states["a"].generations.back().members, testing::ElementsAre("a", "b", "c"));
  EXPECT_THAT(Output(), HasSubstr("[a] agent: node 'c' is back"));
  EXPECT_THAT(Output(), HasSubstr("[b/1] rank=1 of 2 restart=1 group=1/2"));
  EXPECT_THAT(Output(), HasSubstr("[b/1] rank=1 of 3 restart=2 group=1/3"));
}

// A worker of an elastic job cut off from its coordinator stops its ranks
// at once, then reaches the coordinator again and says hello.
TEST_F(JobTest, AWorkerCutOffInAnElasticJobStopsItsRanksAndRejoins) {
  int listener = ListenOnLoopback(port_);
  ASSERT_GE(listener, 0);
  std::optional<NodeJobState> while_cut_off;
  std::thread coordinator([&] {
    std::unique_ptr<PeerChannel> first = AcceptProven(listener);
    ASSERT_TRUE(first->authenticated());
    first->Send(WelcomeMessage{"job-1", "a"});
    first->Send(StartMessage{0, "", {{"a", 1}, {"b", 2}}});
    first->Flush(absl::Seconds(1));
    absl::SleepFor(absl::Seconds(4));  // silent: b stops its ranks after 3 s
    absl::StatusOr<std::string> json = ReadFileToString(dir_ + "/b/job.json");
    if (json.ok() && JobStateFromJson(*json).ok()) while_cut_off = *JobStateFromJson(*json);
    // Attempts made while this side did not answer wait, given up, in
    // the backlog: the one that proves the key is the agent's latest.
    std::unique_ptr<PeerChannel> again;
    std::vector<PeerMessage> said;
    for (int i = 0; i < 20 && (again == nullptr || !again->authenticated()); ++i) {
      said.clear();
      again = AcceptProven(listener, &said);
    }
    ASSERT_TRUE(again->authenticated());
    std::optional<HelloMessage> hello;
    absl::Time deadline = absl::Now() + absl::Seconds(5);
    while (!hello.has_value() && absl::Now() < deadline) {
      for (PeerMessage& message : said) {
        if (auto* words = std::get_if<HelloMessage>(&message)) hello = *words;
      }
      pollfd pfd{again->fd(), POLLIN, 0};
      poll(&pfd, 1, 100);
      said = again->Receive(absl::Now());
    }
    ASSERT_TRUE(hello.has_value());
    EXPECT_EQ(hello->node, "b");
    EXPECT_EQ(hello->nproc, 2);
    again->Send(WelcomeMessage{"job-1", "a"});
    again->Send(EndMessage{JobPhase::kStopped, 143, std::nullopt});
    again->Flush(absl::Seconds(1));
  });
  NodeAgentOptions b = Node("b", 7, 2, {"-1", "0", "hang"});
  b.rejoin_window = absl::Seconds(30);
  absl::StatusOr<NodeJobState> state = RunNodeAgent(b);
  coordinator.join();
  close(listener);
  ASSERT_THAT(state, IsOk());
  EXPECT_EQ(state->phase, JobPhase::kStopped);
  ASSERT_TRUE(while_cut_off.has_value());
  EXPECT_EQ(while_cut_off->waiting, "rejoining");
  EXPECT_EQ(while_cut_off->phase, JobPhase::kRunning);
  // Placed by the members, not by --first-rank: ranks 1 and 2 of 3.
  EXPECT_THAT(Output(), HasSubstr("rank=1 local_rank=0 world=3"));
  EXPECT_THAT(Output(), HasSubstr("rank=2 local_rank=1 world=3"));
  std::vector<pid_t> pids = PidsAfter(Output(), "pid=");
  EXPECT_EQ(pids.size(), 2u);
  for (pid_t pid : pids) EXPECT_FALSE(ProcessRunning(pid)) << pid;
  EXPECT_THAT(Output(), HasSubstr("trying to rejoin"));
}

}  // namespace
}  // namespace fleetplan
