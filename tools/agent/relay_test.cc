#include "tools/agent/relay.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/agent/test_ports.h"
#include "tools/process/files.h"
#include "tools/sync/manifest.h"
#include "tools/util/digest.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string TempDir() {
  std::string pattern = absl::StrCat(testing::TempDir(), "/relay-XXXXXX");
  return mkdtemp(pattern.data());
}

std::string ReadAll(std::FILE* file) {
  std::rewind(file);
  std::string text;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), file)) text.append(buffer, n);
  return text;
}

// A served tree (the chief's) and a receiving one, on loopback.
class RelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chief_ = TempDir();
    node_ = TempDir();
    ASSERT_TRUE(WriteFileAtomic(chief_ + "/a.txt", "alpha\n", 0644).ok());
    ASSERT_TRUE(WriteFileAtomic(chief_ + "/sub/deep/run.sh", "#!/bin/sh\necho hi\n", 0755).ok());
    std::string big(3 << 20, '\0');
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7919 % 251);
    ASSERT_TRUE(WriteFileAtomic(chief_ + "/big.bin", big, 0600).ok());
    absl::StatusOr<Manifest> manifest = BuildManifest(chief_, {".fleetplan"});
    ASSERT_TRUE(manifest.ok());
    manifest_ = *manifest;
    text_ = SerializeManifest(manifest_);
    ASSERT_TRUE(WriteFileAtomic(chief_ + "/.fleetplan/manifest", text_, 0644).ok());
  }

  // Serves once on a thread; returns what the receiver said and its exit.
  int ServeAndReceive(RelayReceiveOptions receive, std::string* said) {
    RelayServeOptions serve;
    serve.root = chief_;
    serve.manifest_path = chief_ + "/.fleetplan/manifest";
    serve.port = FreeLoopbackPort();
    serve.expect = 1;
    serve.timeout = absl::Seconds(20);
    std::FILE* server_out = std::tmpfile();
    std::thread server([&] { RunRelayServe(serve, server_out); });
    receive.from = absl::StrCat("127.0.0.1:", serve.port);
    receive.from_node = "chief";
    receive.root = node_;
    receive.manifest_path = node_ + "/.fleetplan/manifest";
    std::FILE* out = std::tmpfile();
    int exit = RunRelayReceive(receive, out);
    server.join();
    *said = ReadAll(out);
    std::fclose(out);
    std::fclose(server_out);
    return exit;
  }

  std::string chief_, node_, text_;
  Manifest manifest_;
};

TEST_F(RelayTest, ReceiverEndsWithTheServedTreeAndItsManifest) {
  // Something stale to remove, recorded by an earlier sync.
  ASSERT_TRUE(WriteFileAtomic(node_ + "/old.txt", "old\n", 0644).ok());
  Manifest before;
  before.entries.push_back({"old.txt", 4, 0644, DigestHex("old\n")});
  ASSERT_TRUE(WriteFileAtomic(node_ + "/.fleetplan/manifest", SerializeManifest(before), 0644).ok());

  RelayReceiveOptions receive;
  receive.expect_digest = DigestHex(text_);
  std::string said;
  EXPECT_EQ(ServeAndReceive(receive, &said), 0) << said;
  EXPECT_THAT(said, HasSubstr("received 3 files"));
  EXPECT_THAT(said, HasSubstr("removed 1"));
  EXPECT_THAT(FindTreeMismatches(node_, manifest_), IsEmpty());
  EXPECT_NE(access((node_ + "/old.txt").c_str(), F_OK), 0);
  struct stat info {};
  ASSERT_EQ(stat((node_ + "/sub/deep/run.sh").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0755);
  EXPECT_EQ(*ReadFileToString(node_ + "/.fleetplan/manifest"), text_);
}

TEST_F(RelayTest, ASecondReceiveFetchesNothing) {
  std::string said;
  ASSERT_EQ(ServeAndReceive({}, &said), 0) << said;
  EXPECT_EQ(ServeAndReceive({}, &said), 0) << said;
  EXPECT_THAT(said, HasSubstr("received 0 files (0 bytes)"));
}

TEST_F(RelayTest, AStaleManifestOnTheServerFails) {
  RelayReceiveOptions receive;
  receive.expect_digest = DigestHex("another manifest");
  std::string said;
  EXPECT_EQ(ServeAndReceive(receive, &said), 1);
  EXPECT_THAT(said, HasSubstr("not the one apply synced"));
}

TEST_F(RelayTest, AFileThatChangedOnTheServerFailsTheCheckAndIsForgotten) {
  // Same size, other bytes: the receiver's tree check catches it.
  ASSERT_TRUE(WriteFileAtomic(chief_ + "/a.txt", "ALPHA\n", 0644).ok());
  std::string said;
  EXPECT_EQ(ServeAndReceive({}, &said), 1);
  EXPECT_THAT(said, HasSubstr("a.txt"));
  EXPECT_EQ(*ReadFileToString(node_ + "/.fleetplan/manifest"), "");
}

TEST_F(RelayTest, NoServerIsUnreachable) {
  RelayReceiveOptions receive;
  receive.from = absl::StrCat("127.0.0.1:", FreeLoopbackPort());
  receive.from_node = "chief";
  receive.root = node_;
  receive.manifest_path = node_ + "/.fleetplan/manifest";
  receive.connect_timeout = absl::Milliseconds(500);
  std::FILE* out = std::tmpfile();
  EXPECT_EQ(RunRelayReceive(receive, out), kExitRelayUnreachable);
  EXPECT_THAT(ReadAll(out), HasSubstr("cannot reach chief"));
  std::fclose(out);
}

}  // namespace
}  // namespace fleetplan
