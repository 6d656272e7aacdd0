#include "plugins/slurm/state_here.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/process/subprocess.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

// MarkFolderCommand run as a job step's task runs it: sh, $SLURM_JOB_ID set.
void Mark(const std::string& folder, const std::string& job) {
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", MarkFolderCommand(folder)};
  options.env = {{"SLURM_JOB_ID", job}};
  FP_ASSERT_OK_AND_ASSIGN(Completed done, RunToCompletion(options, absl::Seconds(10)));
  ASSERT_EQ(done.status, 0) << done.output;
}

class StateHereTest : public ::testing::Test {
 protected:
  void SetUp() override {
    workdir_ = MakeTempDir() + "/w";
    folder_ = workdir_ + "/.fleetplan/nodes/n1";
  }

  // The folder read here, and by SnapshotCommand: the same answer for `path`.
  void ExpectSameAnswer(StateSnapshot& here, StateSnapshot& by_command, const std::string& path) {
    bool here_answered = false, command_answered = false;
    std::optional<std::string> a = here.Take(path, &here_answered);
    std::optional<std::string> b = by_command.Take(path, &command_answered);
    EXPECT_EQ(here_answered, command_answered) << path;
    EXPECT_EQ(a, b) << path;
  }

  std::string workdir_;
  std::string folder_;
};

TEST_F(StateHereTest, AFolderMarkedByTheAllocationReadsAsTheNodesCommandPrintsIt) {
  Mark(folder_, "42");
  struct stat st;
  ASSERT_EQ(stat(folder_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_THAT(WriteFileAtomic(folder_ + "/steps/sync", "abc\n", 0600), IsOk());
  ASSERT_THAT(WriteFileAtomic(folder_ + "/env.sh", "export A='x y'\n", 0600), IsOk());
  ASSERT_THAT(WriteFileAtomic(folder_ + "/empty", "", 0600), IsOk());
  ASSERT_THAT(WriteFileAtomic(folder_ + "/logs/job.json", "{\"phase\":1}", 0600), IsOk());
  ASSERT_THAT(WriteFileAtomic(folder_ + "/logs/run/rank-0.log", "big", 0600), IsOk());
  ASSERT_EQ(symlink("/etc/passwd", (folder_ + "/link").c_str()), 0);

  FP_ASSERT_OK_AND_ASSIGN(StateSnapshot here, ReadStateFolderHere(folder_, "42"));
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", SnapshotCommand(folder_)};
  FP_ASSERT_OK_AND_ASSIGN(Completed done, RunToCompletion(options, absl::Seconds(10)));
  ASSERT_EQ(done.status, 0) << done.output;
  FP_ASSERT_OK_AND_ASSIGN(StateSnapshot by_command, StateSnapshot::Parse(folder_, done.output));
  for (const char* file : {"/steps/sync", "/env.sh", "/empty", "/slurm-job", "/logs/job.json",
                           "/logs/job.json", "/logs/run/rank-0.log", "/link", "/missing"}) {
    ExpectSameAnswer(here, by_command, folder_ + file);
  }
  bool answered = false;
  EXPECT_EQ(ReadStateFolderHere(folder_, "42")->Take(folder_ + "/slurm-job", &answered),
            std::optional<std::string>("42\n"));
}

TEST_F(StateHereTest, AMarkInPlaceIsLeftAsItIs) {
  Mark(folder_, "42");
  struct stat before, after;
  ASSERT_EQ(stat((folder_ + "/slurm-job").c_str(), &before), 0);
  Mark(folder_, "42");
  ASSERT_EQ(stat((folder_ + "/slurm-job").c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
  Mark(folder_, "43");
  EXPECT_THAT(ReadFileToString(folder_ + "/slurm-job"), IsOkAndHolds("43\n"));
}

TEST_F(StateHereTest, AFolderOfAnotherAllocationOrNoneIsNotTheNodes) {
  EXPECT_THAT(ReadStateFolderHere(folder_, "42"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("nodes")));
  ASSERT_THAT(MakeDirs(folder_), IsOk());
  ASSERT_EQ(chmod(folder_.c_str(), 0700), 0);
  EXPECT_THAT(ReadStateFolderHere(folder_, "42"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no allocation's mark")));
  Mark(folder_, "41");
  EXPECT_THAT(ReadStateFolderHere(folder_, "42"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("marked by job 41")));
  EXPECT_THAT(ReadStateFolderHere(folder_, ""), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(ReadStateFolderHere(workdir_ + "/elsewhere", "41"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(StateHereTest, AFolderOthersCouldWriteOrReachedThroughALinkIsRefused) {
  Mark(folder_, "42");
  ASSERT_EQ(chmod(folder_.c_str(), 0755), 0);
  EXPECT_THAT(ReadStateFolderHere(folder_, "42"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("open to other users")));
  ASSERT_EQ(chmod(folder_.c_str(), 0700), 0);
  ASSERT_THAT(ReadStateFolderHere(folder_, "42"), IsOk());

  // The same folder reached through a linked nodes/ (or .fleetplan/) is not taken.
  std::string other = MakeTempDir() + "/w";
  ASSERT_THAT(MakeDirs(other + "/.fleetplan"), IsOk());
  ASSERT_EQ(symlink((workdir_ + "/.fleetplan/nodes").c_str(), (other + "/.fleetplan/nodes").c_str()),
            0);
  EXPECT_THAT(ReadStateFolderHere(other + "/.fleetplan/nodes/n1", "42"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("nodes")));
}

}  // namespace
}  // namespace fleetplan
