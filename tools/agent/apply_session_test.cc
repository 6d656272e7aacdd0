#include "tools/agent/apply_session.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/protocol/session_wire.h"
#include "tools/sync/manifest.h"
#include "tools/util/digest.h"

namespace fleetplan {
namespace {

// Apply's end of a session served on a thread over two pipes.
class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = absl::StrCat(getenv("TEST_TMPDIR"), "/",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(MakeDirs(root_).ok());
    int to_agent[2], from_agent[2];
    ASSERT_EQ(pipe2(to_agent, O_CLOEXEC), 0);
    ASSERT_EQ(pipe2(from_agent, O_CLOEXEC), 0);
    write_fd_ = to_agent[1];
    read_fd_ = from_agent[0];
    server_ = std::thread([this, in = to_agent[0], out = from_agent[1]] {
      served_ = ServeApplySession(in, out);
      close(in);
      close(out);
    });
    Frame hello = Receive();
    ASSERT_EQ(hello.type, FrameType::kHello);
    ASSERT_EQ(hello.fields, std::vector<std::string>{kSessionGreeting});
  }
  void TearDown() override {
    if (write_fd_ >= 0) close(write_fd_);
    server_.join();
    close(read_fd_);
  }
  // Ends the session; what the agent returned.
  int End() {
    close(write_fd_);
    write_fd_ = -1;
    server_.join();
    server_ = std::thread([] {});
    return served_;
  }

  void Send(FrameType type, const std::vector<std::string>& fields = {}) {
    SendBytes(EncodeFrame(type, fields));
  }
  void SendBytes(const std::string& bytes) { WriteFully(write_fd_, bytes); }
  Frame Receive() {
    while (true) {
      absl::StatusOr<std::optional<Frame>> next = reader_.Next();
      EXPECT_TRUE(next.ok());
      if (next.ok() && next->has_value()) return **next;
      char buffer[4096];
      ssize_t n = read(read_fd_, buffer, sizeof(buffer));
      if (n <= 0) return Frame{FrameType::kError, {"the session ended"}};
      reader_.Feed(absl::string_view(buffer, n));
    }
  }
  // A command's output and its status.
  std::pair<std::string, int> Finish() {
    std::string output;
    while (true) {
      Frame frame = Receive();
      if (frame.type == FrameType::kOutput) {
        output += frame.fields.at(0);
        continue;
      }
      EXPECT_EQ(frame.type, FrameType::kStatus) << frame.fields.at(0);
      return {output, std::atoi(frame.fields.at(0).c_str())};
    }
  }

  std::string root_;
  int write_fd_ = -1;
  int read_fd_ = -1;
  int served_ = -1;
  std::thread server_;
  FrameReader reader_;
};

TEST_F(SessionTest, WritesReadsPutsAndRemovesFiles) {
  Send(FrameType::kWrite, {root_ + "/state/steps/sync", "420", "abc\n"});
  EXPECT_EQ(Receive().type, FrameType::kOk);
  // Two files, the second's data in two chunks.
  Send(FrameType::kPut, {root_ + "/w", "2"});
  Send(FrameType::kFile, {"a/x.sh", "493", "3"});
  Send(FrameType::kData, {"#!x"});
  Send(FrameType::kFile, {"y", "420", "5"});
  Send(FrameType::kData, {"he"});
  Send(FrameType::kData, {"llo"});
  EXPECT_EQ(Receive().type, FrameType::kOk);
  struct stat info;
  ASSERT_EQ(stat((root_ + "/w/a/x.sh").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0755u);
  Send(FrameType::kRead, {root_ + "/w/y", root_ + "/state/steps/sync", root_ + "/nothing"});
  Frame contents = Receive();
  ASSERT_EQ(contents.type, FrameType::kContents);
  EXPECT_EQ(contents.fields, (std::vector<std::string>{"ok", "hello", "ok", "abc\n", "missing",
                                                       contents.fields.at(5)}));
  Send(FrameType::kRemove, {root_ + "/w", "y", "not-there"});
  EXPECT_EQ(Receive().type, FrameType::kOk);
  EXPECT_FALSE(ReadFileToString(root_ + "/w/y").ok());
  EXPECT_EQ(End(), 0);
}

TEST_F(SessionTest, PathsOutsideTheRootAreRefusedAndTheStreamStaysInStep) {
  Send(FrameType::kPut, {root_ + "/w", "2"});
  Send(FrameType::kFile, {"../escape", "420", "2"});
  Send(FrameType::kData, {"no"});
  Send(FrameType::kFile, {"fine", "420", "2"});
  Send(FrameType::kData, {"ok"});
  Frame answer = Receive();
  ASSERT_EQ(answer.type, FrameType::kError);
  EXPECT_TRUE(absl::StrContains(answer.fields.at(0), "../escape")) << answer.fields.at(0);
  EXPECT_FALSE(ReadFileToString(root_ + "/escape").ok());
  Send(FrameType::kRemove, {root_ + "/w", "/etc/passwd"});
  EXPECT_EQ(Receive().type, FrameType::kError);
  Send(FrameType::kRead, {root_ + "/w/fine"});
  EXPECT_EQ(Receive().type, FrameType::kContents);
}

TEST_F(SessionTest, RunsACommandWithItsEnvironmentAndStatus) {
  Send(FrameType::kRun, {"echo \"$GREETING\" in $(pwd); echo err >&2; exit 3", root_, "0", "0",
                         "1000", "GREETING=hi there"});
  auto [output, status] = Finish();
  EXPECT_EQ(status, 3);
  EXPECT_EQ(output, absl::StrCat("hi there in ", root_, "\nerr\n"));
  Send(FrameType::kRun, {"true", root_ + "/missing", "0", "0", "1000"});
  auto [missing_output, missing_status] = Finish();
  EXPECT_NE(missing_status, 0);
  EXPECT_TRUE(absl::StrContains(missing_output, "missing")) << missing_output;
}

TEST_F(SessionTest, ACancelClosesStdinThenStopsTheCommand) {
  // Reads stdin until it ends, says so, then would sleep: TERM ends it.
  Send(FrameType::kRun, {"cat; echo stdin ended; exec sleep 30", "", "1", "100", "5000"});
  Send(FrameType::kCancel);
  auto [output, status] = Finish();
  EXPECT_EQ(output, "stdin ended\n");
  EXPECT_EQ(status, 128 + 15);
}

TEST_F(SessionTest, ApplyLeavingStopsTheCommandAndEndsTheSession) {
  Send(FrameType::kRun, {"exec sleep 30", "", "0", "0", "5000"});
  absl::Time start = absl::Now();
  EXPECT_EQ(End(), 0);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST_F(SessionTest, ChecksTheTreeAndRecordsOnlyWhenItMatches) {
  ASSERT_TRUE(WriteFileAtomic(root_ + "/t/f", "same", 0644).ok());
  Manifest manifest;
  ManifestEntry entry;
  entry.path = "f";
  entry.size = 4;
  entry.mode = 0644;
  entry.digest = DigestHex("same");
  manifest.entries.push_back(entry);
  ASSERT_TRUE(WriteFileAtomic(root_ + "/manifest", SerializeManifest(manifest), 0644).ok());
  Send(FrameType::kVerify, {root_ + "/t", root_ + "/manifest", root_ + "/record", "h\n"});
  auto [ok_output, ok_status] = Finish();
  EXPECT_EQ(ok_status, 0) << ok_output;
  EXPECT_EQ(*ReadFileToString(root_ + "/record"), "h\n");
  ASSERT_TRUE(WriteFileAtomic(root_ + "/t/f", "diff", 0644).ok());
  Send(FrameType::kVerify, {root_ + "/t", root_ + "/manifest", root_ + "/record2", "h\n"});
  auto [bad_output, bad_status] = Finish();
  EXPECT_EQ(bad_status, 1);
  EXPECT_TRUE(absl::StrContains(bad_output, "1 of 1 files differ from what was sent: f"))
      << bad_output;
  EXPECT_FALSE(ReadFileToString(root_ + "/record2").ok());
}

TEST_F(SessionTest, ChecksTheWorkdirFailingClosed) {
  Send(FrameType::kWorkdir, {root_ + "/wd", root_ + "/wd/.fleetplan", "1"});
  auto [ok_output, ok_status] = Finish();
  EXPECT_EQ(ok_status, 0);
  EXPECT_TRUE(absl::StartsWith(ok_output, "fleetplan-check workdir ok ")) << ok_output;
  // More than any disk holds.
  Send(FrameType::kWorkdir, {root_ + "/wd", root_ + "/wd/.fleetplan", "18000000000000000000"});
  auto [full_output, full_status] = Finish();
  EXPECT_EQ(full_status, 1);
  EXPECT_TRUE(absl::StrContains(full_output, "fleetplan-check workdir fail ")) << full_output;
  // Under a file: cannot be created.
  ASSERT_TRUE(WriteFileAtomic(root_ + "/file", "", 0644).ok());
  Send(FrameType::kWorkdir, {root_ + "/file/wd", root_ + "/file/wd/.fleetplan", "1"});
  auto [bad_output, bad_status] = Finish();
  EXPECT_EQ(bad_status, 1);
  EXPECT_TRUE(absl::StrContains(bad_output, "cannot be created or written")) << bad_output;
}

TEST_F(SessionTest, ABrokenStreamEndsTheSessionWithAnError) {
  SendBytes(std::string("R\x7f\xff\xff\xff", 5));
  EXPECT_EQ(End(), 1);
}

TEST_F(SessionTest, AnUnknownRequestEndsTheSessionWithAnError) {
  Send(FrameType::kOk);
  EXPECT_EQ(End(), 1);
}

TEST_F(SessionTest, AStreamEndingInsideAFrameIsBroken) {
  SendBytes(EncodeFrame(FrameType::kRead, {"/x"}).substr(0, 6));
  EXPECT_EQ(End(), 1);
}

}  // namespace
}  // namespace fleetplan

namespace fleetplan {
namespace {

TEST(ApplySessionIdleTest, AnAgentLeftWithoutRequestsEnds) {
  int to_agent[2], from_agent[2];
  ASSERT_EQ(pipe2(to_agent, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(from_agent, O_CLOEXEC), 0);
  absl::Time start = absl::Now();
  // Apply's end stays open but says nothing: a node cut off from it.
  EXPECT_EQ(ServeApplySession(to_agent[0], from_agent[1], absl::Milliseconds(200)), 0);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(200));
  for (int fd : {to_agent[0], to_agent[1], from_agent[0], from_agent[1]}) close(fd);
}

}  // namespace
}  // namespace fleetplan
