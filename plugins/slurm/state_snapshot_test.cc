#include "plugins/slurm/state_snapshot.h"

#include <map>
#include <vector>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/subprocess.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

TEST(StateSnapshotTest, FoldersAreThoseOfNodes) {
  EXPECT_EQ(StateFolderOf("/w/.fleetplan/nodes/n1/steps/sync"), "/w/.fleetplan/nodes/n1");
  EXPECT_EQ(StateFolderOf("/w/.fleetplan/bin/fleetplan-agent"), "");
  EXPECT_EQ(StateFolderOf("/w/.fleetplan/nodes/n1"), "");
  EXPECT_TRUE(SnapshotCovers("/w/.fleetplan/nodes/n1", "/w/.fleetplan/nodes/n1/logs/job.json"));
  EXPECT_FALSE(SnapshotCovers("/w/.fleetplan/nodes/n1", "/w/.fleetplan/nodes/n1/logs/r/rank-0.log"));
  EXPECT_FALSE(SnapshotCovers("/w/.fleetplan/nodes/n1", "/w/.fleetplan/nodes/n10/manifest"));
}

// The command, run by the same sh a node has, on a real folder.
TEST(StateSnapshotTest, TheCommandsOutputParsesBackToTheFiles) {
  std::string dir = MakeTempDir();
  std::string folder = dir + "/w/.fleetplan/nodes/n1";
  ASSERT_THAT(WriteFileAtomic(folder + "/steps/sync", "abc\n\n", 0644), IsOk());
  ASSERT_THAT(WriteFileAtomic(folder + "/env.sh", "export A='x y'\n%s 3 \xc3\xa9", 0644), IsOk());
  ASSERT_THAT(WriteFileAtomic(folder + "/empty", "", 0644), IsOk());
  ASSERT_THAT(WriteFileAtomic(folder + "/logs/job.json", "{}", 0644), IsOk());
  ASSERT_THAT(WriteFileAtomic(folder + "/logs/run/rank-0.log", "big", 0644), IsOk());
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", SnapshotCommand(folder)};
  options.env = {{"LC_ALL", "C"}};
  FP_ASSERT_OK_AND_ASSIGN(Completed done, RunToCompletion(options, absl::Seconds(10)));
  ASSERT_EQ(done.status, 0) << done.output;
  FP_ASSERT_OK_AND_ASSIGN(StateSnapshot snapshot, StateSnapshot::Parse(folder, done.output));
  bool answered = false;
  EXPECT_EQ(snapshot.Take(folder + "/steps/sync", &answered), "abc\n\n");
  EXPECT_EQ(snapshot.Take(folder + "/env.sh", &answered), "export A='x y'\n%s 3 \xc3\xa9");
  EXPECT_EQ(snapshot.Take(folder + "/empty", &answered), "");
  EXPECT_EQ(snapshot.Take(folder + "/logs/job.json", &answered), "{}");
  EXPECT_EQ(snapshot.Take(folder + "/logs/run/rank-0.log", &answered), std::nullopt);
  EXPECT_TRUE(answered);  // not there: the snapshot says so

  // Apply's own files answer again; the agent's job.json is the node's to
  // answer the second time.
  EXPECT_EQ(snapshot.Take(folder + "/steps/sync", &answered), "abc\n\n");
  EXPECT_EQ(snapshot.Take(folder + "/logs/job.json", &answered), std::nullopt);
  EXPECT_FALSE(answered);

  // What apply writes is what the snapshot answers next.
  EXPECT_TRUE(snapshot.Holds(folder + "/steps/sync", "abc\n\n"));
  EXPECT_FALSE(snapshot.Holds(folder + "/steps/sync", "abd"));
  snapshot.Wrote(folder + "/steps/launch", "h");
  EXPECT_TRUE(snapshot.Holds(folder + "/steps/launch", "h"));
  EXPECT_EQ(snapshot.Take(folder + "/steps/launch", &answered), "h");
}

// One step over several hosts: each task prints its own host's line.
TEST(StateSnapshotTest, EveryHostsSnapshotComesBackUnderItsHost) {
  std::string dir = MakeTempDir();
  std::map<std::string, std::string> folders = {{"h1", dir + "/a/.fleetplan/nodes/h1"},
                                                {"h2", dir + "/b/.fleetplan/nodes/h2"}};
  ASSERT_THAT(WriteFileAtomic(folders["h1"] + "/steps/sync", "one\n", 0644), IsOk());
  const std::string manifest(5000, 'm');  // several base64 lines
  ASSERT_THAT(WriteFileAtomic(folders["h2"] + "/manifest", manifest, 0644), IsOk());
  // As srun --label passes it: lines of the tasks interleaved, each with
  // its task's number.
  std::vector<std::vector<std::string>> lines;
  for (const char* host : {"h1", "h2", "h3"}) {
    SubprocessOptions options;
    options.argv = {"/bin/sh", "-c", EveryHostSnapshotCommand(folders)};
    options.env = {{"SLURMD_NODENAME", host}};
    FP_ASSERT_OK_AND_ASSIGN(Completed done, RunToCompletion(options, absl::Seconds(10)));
    ASSERT_EQ(done.status, 0) << done.output;
    lines.emplace_back();
    for (absl::string_view line : absl::StrSplit(done.output, '\n', absl::SkipEmpty())) {
      lines.back().push_back(absl::StrCat(lines.size() - 1, ": ", line));
    }
  }
  std::string output;
  for (size_t i = 0; i < 100; ++i) {
    for (const std::vector<std::string>& task : lines) {
      if (i < task.size()) absl::StrAppend(&output, task[i], "\n");
    }
  }
  std::map<std::string, StateSnapshot> snapshots = ParseEveryHostSnapshot(folders, output);
  ASSERT_EQ(snapshots.size(), 2u) << output;
  bool answered = false;
  EXPECT_EQ(snapshots["h1"].Take(folders["h1"] + "/steps/sync", &answered), "one\n");
  EXPECT_EQ(snapshots["h2"].Take(folders["h2"] + "/manifest", &answered), manifest);
  EXPECT_EQ(snapshots["h2"].Take(folders["h2"] + "/steps/sync", &answered), std::nullopt);
  EXPECT_TRUE(answered);
}

TEST(StateSnapshotTest, AMissingFolderIsAnEmptySnapshot) {
  std::string folder = MakeTempDir() + "/w/.fleetplan/nodes/n1";
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", SnapshotCommand(folder)};
  FP_ASSERT_OK_AND_ASSIGN(Completed done, RunToCompletion(options, absl::Seconds(10)));
  EXPECT_EQ(done.status, 0);
  FP_ASSERT_OK_AND_ASSIGN(StateSnapshot snapshot, StateSnapshot::Parse(folder, done.output));
  bool answered = false;
  EXPECT_EQ(snapshot.Take(folder + "/steps/sync", &answered), std::nullopt);
  EXPECT_TRUE(answered);
}

TEST(StateSnapshotTest, OutputItDidNotPrintIsRefused) {
  EXPECT_THAT(StateSnapshot::Parse("/f", "srun: error: node down\n"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(StateSnapshot::Parse("/f", "10 ./a\n@\nshort"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // A file that grew between stat and cat.
  EXPECT_THAT(StateSnapshot::Parse("/f", "2 ./a\n@\nabc"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fleetplan
