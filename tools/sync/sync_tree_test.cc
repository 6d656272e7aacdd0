#include "tools/sync/sync_tree.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// The local filesystem as a node, with a count of what crossed the channel.
class FilesystemConnection : public Connection {
 public:
  // Only the verifier runs commands: answers with `verify_output` and
  // `verify_exit`.
  absl::StatusOr<int> Run(const CommandSpec& command, const OutputCallback& output,
                          const absl::Notification* cancel) override {
    commands.push_back(command.command);
    output(verify_output);
    if (verify_hangs) cancel->WaitForNotification();
    return verify_exit;
  }
  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    return ReadFileToString(path);
  }
  absl::Status WriteFile(const std::string& path, absl::string_view content,
                         uint32_t mode) override {
    ++writes;
    return WriteFileAtomic(path, content, mode);
  }
  absl::Status PutFiles(const std::vector<FileToSend>& files,
                        const std::string& remote_root) override {
    for (const FileToSend& file : files) {
      sent.push_back(file.path);
      absl::Status status = CopyFileAtomic(
          file.local_path, absl::StrCat(remote_root, "/", file.path), file.mode);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  absl::Status RemoveFiles(const std::string& remote_root,
                           const std::vector<std::string>& paths) override {
    for (const std::string& path : paths) {
      removed.push_back(path);
      std::remove(absl::StrCat(remote_root, "/", path).c_str());
    }
    return absl::OkStatus();
  }

  std::vector<std::string> sent;
  std::vector<std::string> removed;
  std::vector<std::string> commands;
  int writes = 0;
  int verify_exit = 0;
  std::string verify_output;
  bool verify_hangs = false;  // until cancelled
};

class SyncTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string base = getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp";
    std::string pattern = base + "/syncXXXXXX";
    std::string dir = mkdtemp(pattern.data());
    source_ = dir + "/src";
    dest_ = dir + "/dest";
    manifest_path_ = dest_ + "/.fleetplan/nodes/a/manifest";
  }

  void Write(const std::string& path, const std::string& content,
             uint32_t mode = 0644) {
    ASSERT_THAT(WriteFileAtomic(source_ + "/" + path, content, mode), IsOk());
  }

  absl::StatusOr<SyncResult> Sync(FilesystemConnection& connection,
                                  bool ignore_recorded = false,
                                  const BeforeSend& before_send = {}) {
    absl::StatusOr<Manifest> manifest = BuildManifest(source_, {"*.pt", ".git"});
    if (!manifest.ok()) return manifest.status();
    SyncOptions options;
    options.ignore_recorded = ignore_recorded;
    options.before_send = before_send;
    options.verifier = verifier_;
    options.verify_timeout = verify_timeout_;
    return SyncTree(connection, *manifest, dest_, manifest_path_, options);
  }

  std::string Dest(const std::string& path) {
    absl::StatusOr<std::string> content = ReadFileToString(dest_ + "/" + path);
    return content.ok() ? *content : "<missing>";
  }

  std::string source_, dest_, manifest_path_;
  std::string verifier_;
  absl::Duration verify_timeout_ = absl::InfiniteDuration();
};

TEST_F(SyncTreeTest, BeforeSendSeesTheBytesAndCanStopTheSync) {
  Write("a.txt", "alpha");
  Write("b.txt", "bravo!");
  FilesystemConnection connection;
  std::vector<uint64_t> asked;
  auto refuse = [&](uint64_t bytes) {
    asked.push_back(bytes);
    return absl::FailedPreconditionError("no room");
  };
  EXPECT_THAT(Sync(connection, false, refuse),
              StatusIs(absl::StatusCode::kFailedPrecondition, "no room"));
  EXPECT_EQ(Dest("a.txt"), "<missing>") << "nothing is sent";
  auto allow = [&](uint64_t bytes) {
    asked.push_back(bytes);
    return absl::OkStatus();
  };
  ASSERT_THAT(Sync(connection, false, allow), IsOk());
  Write("b.txt", "bravo");
  ASSERT_THAT(Sync(connection, false, allow), IsOk());
  ASSERT_THAT(Sync(connection, false, allow), IsOk());
  // Only what is sent counts, and a sync with nothing to send asks nothing.
  EXPECT_EQ(asked, (std::vector<uint64_t>{11, 11, 5}));
}

TEST_F(SyncTreeTest, FirstSendsAllSecondNothing) {
  Write("train.sh", "#!/bin/sh\necho hi\n", 0755);
  Write("data/a.txt", "alpha");
  Write("model.pt", "big weights");
  Write(".git/HEAD", "ref");
  FilesystemConnection first;
  FP_ASSERT_OK_AND_ASSIGN(SyncResult result, Sync(first));
  EXPECT_EQ(result.files_sent, 2);
  EXPECT_EQ(result.bytes_sent, 18u + 5u);
  EXPECT_EQ(Dest("data/a.txt"), "alpha");
  EXPECT_EQ(Dest("model.pt"), "<missing>");
  EXPECT_EQ(Dest(".git/HEAD"), "<missing>");
  struct stat st;
  ASSERT_EQ(stat((dest_ + "/train.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  EXPECT_THAT(Dest(".fleetplan/nodes/a/manifest"), HasSubstr("train.sh"));

  FilesystemConnection second;
  FP_ASSERT_OK_AND_ASSIGN(SyncResult again, Sync(second));
  EXPECT_FALSE(again.changed());
  EXPECT_TRUE(second.sent.empty());
  EXPECT_EQ(second.writes, 0);
}

TEST_F(SyncTreeTest, SendsOnlyTheChangedFileAndRemovesDeletedOnes) {
  Write("a.txt", "one");
  Write("b.txt", "two");
  Write("c.txt", "three");
  FilesystemConnection first;
  ASSERT_THAT(Sync(first), IsOk());

  Write("b.txt", "TWO!");
  ASSERT_EQ(unlink((source_ + "/c.txt").c_str()), 0);
  FilesystemConnection second;
  FP_ASSERT_OK_AND_ASSIGN(SyncResult result, Sync(second));
  EXPECT_THAT(second.sent, ::testing::ElementsAre("b.txt"));
  EXPECT_THAT(second.removed, ::testing::ElementsAre("c.txt"));
  EXPECT_EQ(result.files_removed, 1);
  EXPECT_EQ(Dest("b.txt"), "TWO!");
  EXPECT_EQ(Dest("c.txt"), "<missing>");
  EXPECT_EQ(Dest("a.txt"), "one");
  EXPECT_THAT(Dest(".fleetplan/nodes/a/manifest"),
              ::testing::Not(HasSubstr("c.txt")));
}

TEST_F(SyncTreeTest, ModeChangeIsSent) {
  Write("run.sh", "x", 0644);
  FilesystemConnection first;
  ASSERT_THAT(Sync(first), IsOk());
  ASSERT_EQ(chmod((source_ + "/run.sh").c_str(), 0755), 0);
  FilesystemConnection second;
  ASSERT_THAT(Sync(second), IsOk());
  EXPECT_THAT(second.sent, ::testing::ElementsAre("run.sh"));
  struct stat st;
  ASSERT_EQ(stat((dest_ + "/run.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
}

TEST_F(SyncTreeTest, IgnoreRecordedResendsEverything) {
  Write("a.txt", "one");
  FilesystemConnection first;
  ASSERT_THAT(Sync(first), IsOk());
  FilesystemConnection forced;
  FP_ASSERT_OK_AND_ASSIGN(SyncResult result, Sync(forced, /*ignore_recorded=*/true));
  EXPECT_EQ(result.files_sent, 1);
}

TEST_F(SyncTreeTest, CorruptRecordedManifestResendsEverything) {
  Write("a.txt", "one");
  FilesystemConnection first;
  ASSERT_THAT(Sync(first), IsOk());
  ASSERT_THAT(WriteFileAtomic(manifest_path_, "garbage\n", 0644), IsOk());
  FilesystemConnection second;
  FP_ASSERT_OK_AND_ASSIGN(SyncResult result, Sync(second));
  EXPECT_EQ(result.files_sent, 1);
}

TEST(CheckSyncTargetTest, RefusesSyncingIntoTheSource) {
  EXPECT_THAT(CheckSyncTarget("/home/u/proj", "/tmp/work"), IsOk());
  EXPECT_THAT(CheckSyncTarget("/home/u/proj", "/home/u/project"), IsOk());
  EXPECT_THAT(CheckSyncTarget("/home/u/proj", "/home/u/proj/"),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("/home/u/proj")));
  EXPECT_THAT(CheckSyncTarget("/home/u/proj", "/home/u/proj/run"),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("inside")));
  EXPECT_THAT(CheckSyncTarget("/home/u/proj/./src", "/home/u"),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("")));
  EXPECT_THAT(CheckSyncTarget("/a/b/../c", "/a/c/d"),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("")));
}

TEST_F(SyncTreeTest, VerifierChecksEveryChangedSyncOnly) {
  Write("a.txt", "alpha");
  verifier_ = "/work dir/.fleetplan/bin/fleetplan-agent";
  FilesystemConnection first;
  ASSERT_THAT(Sync(first), IsOk());
  EXPECT_THAT(first.commands,
              ElementsAre("'/work dir/.fleetplan/bin/fleetplan-agent' verify-tree --protocol=2 "
                          "--root=" + dest_ + " --manifest=" + manifest_path_));
  FilesystemConnection unchanged;
  ASSERT_THAT(Sync(unchanged), IsOk());
  EXPECT_THAT(unchanged.commands, IsEmpty()) << "nothing sent, nothing to check";
}

TEST_F(SyncTreeTest, TreeFailingTheCheckIsDataLossAndResentInFullNextTime) {
  Write("a.txt", "alpha");
  Write("b.txt", "bravo");
  verifier_ = "/opt/agent";
  FilesystemConnection corrupted;
  corrupted.verify_exit = 1;
  corrupted.verify_output = "1 of 2 files differ from what was sent: b.txt\n";
  EXPECT_THAT(Sync(corrupted),
              StatusIs(absl::StatusCode::kDataLoss,
                       "checking " + dest_ +
                           " after the sync: 1 of 2 files differ from what was sent: b.txt"));
  EXPECT_EQ(Dest(".fleetplan/nodes/a/manifest"), "") << "the record is not trusted";
  FilesystemConnection next;
  FP_ASSERT_OK_AND_ASSIGN(SyncResult result, Sync(next));
  EXPECT_EQ(result.files_sent, 2);
  EXPECT_THAT(next.commands, SizeIs(1));
}

TEST_F(SyncTreeTest, VerifierThatCannotRunIsNamedAndTheTreeIsResentNextTime) {
  Write("a.txt", "alpha");
  verifier_ = "/opt/agent";
  FilesystemConnection broken;
  broken.verify_exit = 127;
  broken.verify_output = "sh: 1: /opt/agent: not found\n";
  EXPECT_THAT(Sync(broken), StatusIs(absl::StatusCode::kFailedPrecondition,
                                     "checking " + dest_ +
                                         " after the sync: /opt/agent could not run on the node "
                                         "(status 127): sh: 1: /opt/agent: not found"));
  FilesystemConnection next;
  FP_ASSERT_OK_AND_ASSIGN(SyncResult result, Sync(next));
  EXPECT_EQ(result.files_sent, 1);
}

TEST_F(SyncTreeTest, HangingVerifierIsStoppedAfterItsTimeout) {
  Write("a.txt", "alpha");
  verifier_ = "/opt/agent";
  verify_timeout_ = absl::Milliseconds(100);
  FilesystemConnection stuck;
  stuck.verify_hangs = true;
  stuck.verify_exit = 143;
  EXPECT_THAT(Sync(stuck), StatusIs(absl::StatusCode::kDeadlineExceeded,
                                    "checking " + dest_ +
                                        " after the sync: still running after 100ms, stopped"));
  EXPECT_EQ(Dest(".fleetplan/nodes/a/manifest"), "") << "unchecked, so not trusted";
}

}  // namespace
}  // namespace fleetplan
