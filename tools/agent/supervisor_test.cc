#include "tools/agent/supervisor.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class SupervisorTest : public ::testing::Test {
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

  SupervisorOptions Options(int nproc, std::vector<std::string> args) {
    SupervisorOptions options;
    options.node = "n1";
    options.first_rank = 4;
    options.nproc = nproc;
    options.log_dir = dir_ + "/logs";
    options.grace_period = absl::Seconds(5);
    options.program = {fake_rank_};
    options.program.insert(options.program.end(), args.begin(), args.end());
    options.stdin_fd = -1;
    options.output_fd = out_fd_;
    return options;
  }

  std::string Output() { return ReadFileToString(out_path_).value_or(""); }

  std::string dir_, out_path_, fake_rank_;
  int out_fd_ = -1;
};

TEST_F(SupervisorTest, AllRanksSucceedWithPrefixedOutputLogsAndResult) {
  FP_ASSERT_OK_AND_ASSIGN(AgentResult result,
                          RunSupervisor(Options(3, {"-1", "0", "exit"})));
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.failed_rank, -1);
  EXPECT_EQ(result.restarts, 0);
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
  FP_ASSERT_OK_AND_ASSIGN(std::string json, ReadFileToString(dir_ + "/logs/result.json"));
  FP_ASSERT_OK_AND_ASSIGN(AgentResult stored, ResultFromJson(json));
  EXPECT_EQ(stored.node, "n1");
  EXPECT_EQ(stored.status, 0);
  EXPECT_EQ(stored.failed_rank, -1);
  EXPECT_EQ(stored.run_id, result.run_id);
  EXPECT_EQ(access((dir_ + "/logs/" + result.run_id + "/rank-6.log").c_str(), F_OK), 0);
}

TEST_F(SupervisorTest, OneFailingRankStopsTheOthers) {
  absl::Time start = absl::Now();
  FP_ASSERT_OK_AND_ASSIGN(AgentResult result,
                          RunSupervisor(Options(3, {"5", "3", "hang"})));
  EXPECT_LT(absl::Now() - start, absl::Seconds(4)) << "SIGTERM, not the grace period";
  EXPECT_EQ(result.status, 3);
  EXPECT_EQ(result.failed_rank, 5);
  std::string out = Output();
  std::vector<pid_t> pids = PidsAfter(out, "pid=");
  ASSERT_EQ(pids.size(), 3u) << out;
  for (pid_t pid : pids) EXPECT_FALSE(ProcessRunning(pid)) << pid;
  EXPECT_THAT(out, HasSubstr("[n1/5] rank 5 failing\n"));
  FP_ASSERT_OK_AND_ASSIGN(AgentResult stored,
                          ResultFromJson(*ReadFileToString(dir_ + "/logs/result.json")));
  EXPECT_EQ(stored.status, 3);
  EXPECT_EQ(stored.failed_rank, 5);
}

TEST_F(SupervisorTest, RankKilledBySignalGives128PlusSignal) {
  FP_ASSERT_OK_AND_ASSIGN(AgentResult result,
                          RunSupervisor(Options(2, {"4", "kill", "hang"})));
  EXPECT_EQ(result.status, 128 + 9);
  EXPECT_EQ(result.failed_rank, 4);
}

TEST_F(SupervisorTest, RestartsTheWholeSetUpToTheLimit) {
  SupervisorOptions options = Options(2, {"5", "7", "exit"});
  options.restarts = 2;
  FP_ASSERT_OK_AND_ASSIGN(AgentResult result, RunSupervisor(options));
  EXPECT_EQ(result.status, 7);
  EXPECT_EQ(result.failed_rank, 5);
  EXPECT_EQ(result.restarts, 2);
  std::string out = Output();
  EXPECT_THAT(out, HasSubstr("restarting all ranks (restart 1 of 2)"));
  EXPECT_THAT(out, HasSubstr("restarting all ranks (restart 2 of 2)"));
  EXPECT_EQ(PidsAfter(out, "pid=").size(), 6u) << "3 attempts of 2 ranks";
  FP_ASSERT_OK_AND_ASSIGN(std::string log,
                          ReadFileToString(dir_ + "/logs/latest/rank-4.log"));
  EXPECT_THAT(log, HasSubstr("--- restart 2 ---"));
}

TEST_F(SupervisorTest, ARestartCanSucceed) {
  SupervisorOptions options = Options(2, {"4", "1", "exit", dir_ + "/failed-once"});
  options.restarts = 3;
  FP_ASSERT_OK_AND_ASSIGN(AgentResult result, RunSupervisor(options));
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.failed_rank, -1);
  EXPECT_EQ(result.restarts, 1);
}

TEST_F(SupervisorTest, StdinEndOfFileStopsEveryRank) {
  int in[2];
  ASSERT_EQ(pipe2(in, O_CLOEXEC), 0);
  SupervisorOptions options = Options(2, {"-1", "0", "hang"});
  options.stdin_fd = in[0];
  absl::StatusOr<AgentResult> result;
  std::thread agent([&] { result = RunSupervisor(options); });
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
  EXPECT_EQ(result->status, 128 + 15);
  EXPECT_EQ(result->failed_rank, 4);
  EXPECT_THAT(Output(), HasSubstr("[n1] agent: stdin closed; stopping all ranks\n"));
  EXPECT_EQ(access((dir_ + "/logs/result.json").c_str(), F_OK), 0);
}

TEST_F(SupervisorTest, MissingProgramIsAFailedRank) {
  SupervisorOptions options = Options(2, {});
  options.program = {dir_ + "/no-such-program"};
  FP_ASSERT_OK_AND_ASSIGN(AgentResult result, RunSupervisor(options));
  EXPECT_EQ(result.status, 127);
  EXPECT_EQ(result.failed_rank, 4);
}

TEST_F(SupervisorTest, BadOptionsAreInvalidArgument) {
  SupervisorOptions options = Options(0, {});
  EXPECT_THAT(RunSupervisor(options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--nproc")));
  options = Options(1, {});
  options.program.clear();
  EXPECT_THAT(RunSupervisor(options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("program")));
}

TEST(LowestFailingRankTest, PicksTheLowestNonZero) {
  EXPECT_EQ(LowestFailingRank({}), -1);
  EXPECT_EQ(LowestFailingRank({{0, 0}, {1, 0}}), -1);
  EXPECT_EQ(LowestFailingRank({{3, 143}, {1, 0}, {2, 9}}), 2);
}

}  // namespace
}  // namespace fleetplan
