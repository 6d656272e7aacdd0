#include "plugins/slurm/state_snapshot.h"

#include <map>
#include <string>

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
  ASSERT_THAT(WriteFileAtomic(folders["h2"] + "/manifest", "two", 0644), IsOk());
  std::string output;
  for (const char* host : {"h1", "h2", "h3"}) {
    SubprocessOptions options;
    options.argv = {"/bin/sh", "-c", EveryHostSnapshotCommand(folders)};
    options.env = {{"SLURMD_NODENAME", host}};
    FP_ASSERT_OK_AND_ASSIGN(Completed done, RunToCompletion(options, absl::Seconds(10)));
    ASSERT_EQ(done.status, 0) << done.output;
    output += done.output;
  }
  std::map<std::string, StateSnapshot> snapshots = ParseEveryHostSnapshot(folders, output);
  ASSERT_EQ(snapshots.size(), 2u) << output;
  bool answered = false;
  EXPECT_EQ(snapshots["h1"].Take(folders["h1"] + "/steps/sync", &answered), "one\n");
  EXPECT_EQ(snapshots["h2"].Take(folders["h2"] + "/manifest", &answered), "two");
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
  EXPECT_THAT(StateSnapshot::Parse("/f", "10 ./a\nshort"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fleetplan
