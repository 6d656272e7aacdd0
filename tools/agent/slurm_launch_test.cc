#include "tools/agent/slurm_launch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr absl::Duration kPoll = absl::Milliseconds(10);

// What `run` printed on a FILE of its own.
template <typename F>
std::string Printed(F run, int* status) {
  char* bytes = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&bytes, &size);
  *status = run(out);
  std::fclose(out);
  std::string text(bytes, size);
  free(bytes);
  return text;
}

class SlurmLaunchTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(); }
  std::string dir_;
};

TEST_F(SlurmLaunchTest, TheScriptIsNamedToTheBatchScriptOnceItWaits) {
  AgentSlurmRequest request{dir_, "r1", absl::Seconds(5)};
  std::string fifo = dir_ + "/requests";
  std::thread holder([&] {
    // The batch script comes a moment later, and holds its FIFO open.
    absl::SleepFor(absl::Milliseconds(100));
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  });
  int reader = -1;
  while ((reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK)) < 0) absl::SleepFor(kPoll);
  holder.join();
  int status = -1;
  std::string said = Printed(
      [&](std::FILE* err) { return HandLaunchToHolder(request, "echo launch\n", err, kPoll); },
      &status);
  EXPECT_EQ(status, 0) << said;
  char line[16] = {};
  EXPECT_EQ(read(reader, line, sizeof(line)), 3);
  EXPECT_EQ(std::string(line), "r1\n");
  close(reader);
  EXPECT_THAT(ReadFileToString(dir_ + "/launch-r1.sh"), IsOkAndHolds("echo launch\n"));
  struct stat info;
  ASSERT_EQ(stat((dir_ + "/launch-r1.sh").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
}

TEST_F(SlurmLaunchTest, NoBatchScriptIsSaidAfterTheWait) {
  AgentSlurmRequest request{dir_, "r1", absl::Milliseconds(100)};
  int status = -1;
  std::string said = Printed(
      [&](std::FILE* err) { return HandLaunchToHolder(request, "x", err, kPoll); }, &status);
  EXPECT_EQ(status, 1);
  EXPECT_THAT(said, HasSubstr(absl::StrCat(": no fleetplan batch script waiting in ", dir_,
                                           " after 100ms")));
  // A FIFO nobody reads: the batch script is gone.
  ASSERT_EQ(mkfifo((dir_ + "/requests").c_str(), 0600), 0);
  said = Printed([&](std::FILE* err) { return HandLaunchToHolder(request, "x", err, kPoll); },
                 &status);
  EXPECT_EQ(status, 1);
  EXPECT_THAT(said, HasSubstr("no fleetplan batch script reads"));
}

TEST_F(SlurmLaunchTest, TheReportSaysTheAgentsWordsAndStatus) {
  AgentSlurmAwait await{dir_ + "/a.report", dir_ + "/launch.exit", dir_ + "/launch.log", "n-1",
                        absl::Seconds(5)};
  std::thread agent([&] {
    absl::SleepFor(absl::Milliseconds(100));
    ASSERT_THAT(WriteFileAtomic(await.report, "3\nn-1: the job failed\n", 0600), IsOk());
  });
  int status = -1;
  std::string said =
      Printed([&](std::FILE* out) { return AwaitLaunchReport(await, out, kPoll); }, &status);
  agent.join();
  EXPECT_EQ(status, 3);
  EXPECT_EQ(said, "n-1: the job failed\n");
}

TEST_F(SlurmLaunchTest, AStepThatEndedFirstOrSilenceIsAFailure) {
  AgentSlurmAwait await{dir_ + "/a.report", dir_ + "/launch.exit", dir_ + "/launch.log", "n-1",
                        absl::Milliseconds(100)};
  int status = -1;
  std::string said =
      Printed([&](std::FILE* out) { return AwaitLaunchReport(await, out, kPoll); }, &status);
  EXPECT_EQ(status, 1);
  EXPECT_EQ(said,
            "n-1: no word from the launch agent within 100ms of its job step's start (see "
            "squeue -s)\n");
  ASSERT_THAT(WriteFileAtomic(await.step_exit, "1\n", 0600), IsOk());
  ASSERT_THAT(WriteFileAtomic(await.step_log, "srun: error: Unable to create step\n", 0600),
              IsOk());
  said = Printed([&](std::FILE* out) { return AwaitLaunchReport(await, out, kPoll); }, &status);
  EXPECT_EQ(status, 1);
  EXPECT_THAT(said, StartsWith("n-1: the launch agents' job step ended (srun exit 1) before "
                               "this node's agent said anything:\nsrun: error: Unable"));
  ASSERT_THAT(WriteFileAtomic(await.report, "none\n", 0600), IsOk());
  said = Printed([&](std::FILE* out) { return AwaitLaunchReport(await, out, kPoll); }, &status);
  EXPECT_EQ(status, 1);
  EXPECT_THAT(said, HasSubstr("has no status on its first line"));
}

}  // namespace
}  // namespace fleetplan
