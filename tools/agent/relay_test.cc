#include "tools/agent/relay.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <atomic>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/agent/relay_wire.h"
#include "tools/agent/sockets.h"
#include "tools/agent/test_ports.h"
#include "tools/process/files.h"
#include "tools/protocol/relay_report.h"
#include "tools/secure/tls_channel.h"
#include "tools/sync/manifest.h"
#include "tools/util/digest.h"
#include "tools/secure/testing.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

JobKey TestKey(uint8_t fill = 9) { return TestJobKey(fill); }

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

uint64_t FileSize(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 ? info.st_size : 0;
}

// Waits (up to 20 s) until `path` holds at least `bytes`.
bool WaitForSize(const std::string& path, uint64_t bytes) {
  for (absl::Time deadline = absl::Now() + absl::Seconds(20); absl::Now() < deadline;
       absl::SleepFor(absl::Milliseconds(10))) {
    if (FileSize(path) >= bytes) return true;
  }
  return false;
}

// A relay source for one receiver that stops after `pause_at` bytes of
// big.bin until Release(), then sends the rest or, told to, breaks off:
// a parent whose own source is slow, or that dies mid-file. Serving starts
// at once unless `start` is false: a test that forks starts it after the
// fork, since a child forked while another thread holds a lock (the dynamic
// loader's, OpenSSL's) can hang on it forever.
class SlowSource {
 public:
  SlowSource(const std::string& root, const std::string& text, const Manifest& manifest,
             uint64_t pause_at, bool start = true)
      : listening_(BindAnyAddress(0)), serve_([=] { Serve(root, text, manifest, pause_at); }) {
    sockaddr_in6 address{};
    socklen_t length = sizeof(address);
    getsockname(listening_.get(), reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin6_port);
    if (start) Start();
  }
  ~SlowSource() {
    if (!released_.HasBeenNotified()) released_.Notify();
    if (thread_.joinable()) thread_.join();
  }
  void Start() { thread_ = std::thread(serve_); }
  int port() const { return port_; }
  void Release(bool break_off) {
    break_off_ = break_off;
    released_.Notify();
  }

 private:
  void Serve(const std::string& root, const std::string& text, const Manifest& manifest,
             uint64_t pause_at) {
    auto endpoint = TlsEndpoint::Make(TlsEndpoint::Side::kServer, TestKey(), kRelayPurpose);
    auto made = TlsSocket::Make(*endpoint, accept(listening_.get(), nullptr, nullptr));
    TlsSocket& socket = **made;
    if (!socket.HandshakeBy(absl::Now() + absl::Seconds(5)).ok()) return;
    if (!socket.SendAll(absl::StrCat(kRelayMagic, " slow\n", text.size(), "\n", text)).ok()) {
      return;
    }
    absl::StatusOr<std::string> wanted = socket.ReceiveLine(1024);
    if (!wanted.ok()) return;
    for (absl::string_view word : absl::StrSplit(*wanted, ' ', absl::SkipEmpty())) {
      const ManifestEntry& entry = manifest.entries[std::stoul(std::string(word))];
      std::string content = *ReadFileToString(absl::StrCat(root, "/", entry.path));
      if (entry.path == "big.bin") {
        if (!socket.SendAll(absl::string_view(content).substr(0, pause_at)).ok()) return;
        released_.WaitForNotification();
        if (break_off_) return;
        content = content.substr(pause_at);
      }
      if (!socket.SendAll(content).ok()) return;
    }
  }

  Fd listening_;
  std::function<void()> serve_;
  int port_ = 0;
  absl::Notification released_;
  bool break_off_ = false;
  std::thread thread_;
};

// A served tree (the chief's) and a receiving one, on loopback.
class RelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chief_ = TempDir();
    node_ = TempDir();
    ASSERT_TRUE(WriteFileAtomic(chief_ + "/a.txt", "alpha\n", 0644).ok());
    ASSERT_TRUE(WriteFileAtomic(chief_ + "/sub/deep/run.sh", "#!/bin/sh\necho hi\n", 0755).ok());
    std::string big(kBig, '\0');
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7919 % 251);
    ASSERT_TRUE(WriteFileAtomic(chief_ + "/big.bin", big, 0600).ok());
    RecordChiefsManifest();
  }

  void RecordChiefsManifest() {
    absl::StatusOr<Manifest> manifest = BuildManifest(chief_, {".fleetplan"});
    ASSERT_TRUE(manifest.ok());
    manifest_ = *manifest;
    text_ = SerializeManifest(manifest_);
    ASSERT_TRUE(WriteFileAtomic(chief_ + "/.fleetplan/manifest", text_, 0644).ok());
  }

  static constexpr uint64_t kBig = 8 << 20;

  // The chief's relay server on a thread, for `expect` receivers.
  std::thread ServeChief(int port, int expect, std::FILE* out) {
    RelayServeOptions serve;
    serve.root = chief_;
    serve.manifest_path = chief_ + "/.fleetplan/manifest";
    serve.key = TestKey();
    serve.port = port;
    serve.expect = expect;
    serve.timeout = absl::Seconds(20);
    return std::thread([serve, out] { RunRelayServe(serve, out); });
  }

  // What a node at `root` fetching from `sources` (node name, port) runs.
  static RelayReceiveOptions ReceiveInto(
      const std::string& root, const std::vector<std::pair<std::string, int>>& sources) {
    RelayReceiveOptions receive;
    receive.key = TestKey();
    for (const auto& [node, port] : sources) {
      receive.sources.push_back({absl::StrCat("127.0.0.1:", port), node});
    }
    receive.root = root;
    receive.manifest_path = root + "/.fleetplan/manifest";
    receive.linger = absl::Seconds(5);
    return receive;
  }

  // Runs a receive; what it said, and its exit.
  static int Receive(const RelayReceiveOptions& receive, std::string* said) {
    std::FILE* out = std::tmpfile();
    int exit = RunRelayReceive(receive, out);
    *said = ReadAll(out);
    std::fclose(out);
    return exit;
  }

  // Serves once on a thread; returns what the receiver said and its exit.
  int ServeAndReceive(RelayReceiveOptions receive, std::string* said) {
    int port = FreeLoopbackPort();
    std::FILE* server_out = std::tmpfile();
    std::thread server = ServeChief(port, 1, server_out);
    RelayReceiveOptions into = ReceiveInto(node_, {{"chief", port}});
    into.expect_digest = receive.expect_digest;
    int exit = Receive(into, said);
    server.join();
    std::fclose(server_out);
    return exit;
  }

  // `root` holds exactly the chief's tree, big.bin byte for byte.
  void ExpectChiefsTree(const std::string& root) {
    EXPECT_THAT(FindTreeMismatches(root, manifest_), IsEmpty()) << root;
    EXPECT_EQ(*ReadFileToString(root + "/big.bin"), *ReadFileToString(chief_ + "/big.bin"));
    EXPECT_EQ(*ReadFileToString(root + "/.fleetplan/manifest"), text_);
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
  std::optional<RelayReceived> received = ParseRelayReport(said).received;
  ASSERT_TRUE(received.has_value()) << said;
  EXPECT_EQ(received->files, 3u);
  EXPECT_EQ(received->removed, 1u);
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
  std::optional<RelayReceived> received = ParseRelayReport(said).received;
  ASSERT_TRUE(received.has_value()) << said;
  EXPECT_EQ(received->files, 0u);
  EXPECT_EQ(received->bytes, 0u);
}

TEST_F(RelayTest, AStaleManifestOnTheServerFails) {
  RelayReceiveOptions receive;
  receive.expect_digest = DigestHex("another manifest");
  std::string said;
  EXPECT_EQ(ServeAndReceive(receive, &said), 1);
  EXPECT_THAT(said, HasSubstr("not the one apply synced"));
}

TEST_F(RelayTest, AFileThatChangedOnTheServerNeverLandsAndIsForgotten) {
  // Same size, other bytes: they fail the manifest's digest before the
  // file is renamed into place.
  ASSERT_TRUE(WriteFileAtomic(chief_ + "/a.txt", "ALPHA\n", 0644).ok());
  std::string said;
  EXPECT_EQ(ServeAndReceive({}, &said), 1);
  EXPECT_THAT(said, HasSubstr("a.txt: its bytes do not match the manifest's digest"));
  EXPECT_FALSE(ReadFileToString(node_ + "/a.txt").ok());
  EXPECT_EQ(*ReadFileToString(node_ + "/.fleetplan/manifest"), "");
}

// Someone on the nodes' network that is no node of the job, connecting to
// the relay again and again while it serves and asking for every entry in
// plain text or with another key: it receives none of the tree's bytes,
// and the real receiver still gets the whole tree.
TEST_F(RelayTest, AStrangerAskingForEveryEntryGetsNoneOfTheTree) {
  const std::string marker = "marker-7f3a9c: the user's secret source";
  ASSERT_TRUE(WriteFileAtomic(chief_ + "/marker.txt", marker, 0644).ok());
  RecordChiefsManifest();
  int port = FreeLoopbackPort();
  std::FILE* server_out = std::tmpfile();
  std::thread server = ServeChief(port, 1, server_out);
  std::atomic<bool> done{false};
  std::string received;
  std::mutex received_mu;
  std::vector<std::thread> strangers;
  strangers.emplace_back([&] {
    std::string ask;
    for (size_t i = 0; i < manifest_.entries.size(); ++i) absl::StrAppend(&ask, i, " ");
    ask += "\n";
    while (!done) {
      absl::StatusOr<Connected> connected =
          ConnectWithRetry(absl::StrCat("127.0.0.1:", port), absl::Seconds(1));
      if (!connected.ok()) continue;
      send(connected->fd.get(), ask.data(), ask.size(), MSG_NOSIGNAL);
      char buffer[65536];
      SetSocketTimeouts(connected->fd.get(), absl::Seconds(1));
      fcntl(connected->fd.get(), F_SETFL, 0);
      for (ssize_t n; (n = recv(connected->fd.get(), buffer, sizeof(buffer), 0)) > 0;) {
        std::lock_guard<std::mutex> lock(received_mu);
        received.append(buffer, n);
      }
    }
  });
  strangers.emplace_back([&] {
    auto endpoint = TlsEndpoint::Make(TlsEndpoint::Side::kClient, TestKey(77), kRelayPurpose);
    while (!done) {
      absl::StatusOr<Connected> connected =
          ConnectWithRetry(absl::StrCat("127.0.0.1:", port), absl::Seconds(1));
      if (!connected.ok()) continue;
      auto socket = TlsSocket::Make(*endpoint, connected->fd.release());
      EXPECT_FALSE((*socket)->HandshakeBy(absl::Now() + absl::Seconds(2)).ok());
    }
  });
  absl::SleepFor(absl::Milliseconds(200));  // they come first
  std::string said;
  EXPECT_EQ(Receive(ReceiveInto(node_, {{"chief", port}}), &said), 0) << said;
  server.join();
  done = true;
  for (std::thread& stranger : strangers) stranger.join();
  ExpectChiefsTree(node_);
  EXPECT_EQ(*ReadFileToString(node_ + "/marker.txt"), marker);
  EXPECT_THAT(received, Not(HasSubstr("marker-7f3a9c")));
  EXPECT_THAT(received, Not(HasSubstr(kRelayMagic)));
  EXPECT_THAT(ReadAll(server_out), HasSubstr("relay: refused a connection"));
  std::fclose(server_out);
}

TEST_F(RelayTest, ASourceWithoutTheJobsKeyIsNotBelieved) {
  int port = FreeLoopbackPort();
  std::FILE* server_out = std::tmpfile();
  RelayServeOptions serve;
  serve.root = chief_;
  serve.manifest_path = chief_ + "/.fleetplan/manifest";
  serve.key = TestKey(3);  // another job's
  serve.port = port;
  serve.expect = 1;
  serve.timeout = absl::Seconds(5);
  std::thread server([serve, server_out] { RunRelayServe(serve, server_out); });
  RelayReceiveOptions receive = ReceiveInto(node_, {{"chief", port}});
  std::string said;
  EXPECT_EQ(Receive(receive, &said), kExitRelayUnreachable);
  EXPECT_THAT(said, HasSubstr("TLS handshake"));
  EXPECT_FALSE(ReadFileToString(node_ + "/a.txt").ok());
  server.join();
  std::fclose(server_out);
}

TEST_F(RelayTest, NoServerIsUnreachable) {
  RelayReceiveOptions receive = ReceiveInto(node_, {{"chief", FreeLoopbackPort()}});
  receive.connect_timeout = absl::Milliseconds(500);
  std::FILE* out = std::tmpfile();
  EXPECT_EQ(RunRelayReceive(receive, out), kExitRelayUnreachable);
  EXPECT_THAT(ReadAll(out), HasSubstr("cannot reach chief"));
  std::fclose(out);
}


TEST_F(RelayTest, ABigFileAndManySmallOnesCrossThreeHopsByteForByte) {
  // chief → n1 → n2 → n3, each passing on what it receives: small files
  // renamed into place while a child reads them, the big one in chunks.
  uint64_t small_bytes = 0;
  for (int i = 0; i < 400; ++i) {
    std::string content(50 + i, static_cast<char>('a' + i % 26));
    ASSERT_TRUE(WriteFileAtomic(absl::StrCat(chief_, "/small/d", i % 9, "/f", i), content,
                                i % 5 == 0 ? 0755 : 0644)
                    .ok());
    small_bytes += content.size();
  }
  RecordChiefsManifest();
  int chief = FreeLoopbackPort(), n1 = FreeLoopbackPort(), n2 = FreeLoopbackPort();
  std::vector<std::string> roots = {node_, TempDir(), TempDir()};
  std::FILE* server_out = std::tmpfile();
  std::thread server = ServeChief(chief, 1, server_out);
  std::vector<std::pair<std::string, int>> from = {{"chief", chief}, {"n1", n1}, {"n2", n2}};
  std::vector<std::string> said(3);
  std::vector<int> exits(3, -1);
  std::vector<std::thread> nodes;
  for (int i = 0; i < 3; ++i) {
    RelayReceiveOptions receive = ReceiveInto(roots[i], {from[i]});
    receive.expect_digest = DigestHex(text_);
    if (i < 2) {
      receive.serve_port = from[i + 1].second;
      receive.serve_expect = 1;
    }
    nodes.emplace_back([&, i, receive] { exits[i] = Receive(receive, &said[i]); });
  }
  for (std::thread& node : nodes) node.join();
  server.join();
  std::fclose(server_out);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(exits[i], 0) << said[i];
    std::optional<RelayReceived> received = ParseRelayReport(said[i]).received;
    ASSERT_TRUE(received.has_value()) << said[i];
    EXPECT_EQ(received->files, 403u);
    EXPECT_EQ(received->bytes, kBig + 6 + 18 + small_bytes);
    EXPECT_THAT(received->from, ElementsAre(from[i].first));
    EXPECT_EQ(received->removed, 0u);
    ExpectChiefsTree(roots[i]);
  }
}

TEST_F(RelayTest, AParentStillReceivingServesItsChildWhatItHasWritten) {
  // The parent's own source stops halfway through big.bin; its child has
  // that half by then, and the rest once the source goes on.
  SlowSource source(chief_, text_, manifest_, kBig / 2);
  std::string parent = TempDir();
  int parent_port = FreeLoopbackPort();
  RelayReceiveOptions receive = ReceiveInto(parent, {{"chief", source.port()}});
  receive.serve_port = parent_port;
  receive.serve_expect = 1;
  std::string parent_said, child_said;
  int parent_exit = -1, child_exit = -1;
  std::thread parent_node([&] { parent_exit = Receive(receive, &parent_said); });
  std::thread child_node(
      [&] { child_exit = Receive(ReceiveInto(node_, {{"n1", parent_port}}), &child_said); });
  EXPECT_TRUE(WaitForSize(node_ + "/big.bin.fleetplan-part", kBig / 2));
  EXPECT_EQ(FileSize(parent + "/big.bin.fleetplan-part"), kBig / 2);
  source.Release(/*break_off=*/false);
  parent_node.join();
  child_node.join();
  EXPECT_EQ(parent_exit, 0) << parent_said;
  EXPECT_EQ(child_exit, 0) << child_said;
  std::optional<RelayReceived> received = ParseRelayReport(child_said).received;
  ASSERT_TRUE(received.has_value()) << child_said;
  EXPECT_THAT(received->from, ElementsAre("n1"));
  EXPECT_EQ(received->removed, 0u);
  ExpectChiefsTree(parent);
  ExpectChiefsTree(node_);
}

TEST_F(RelayTest, AChildWhoseParentIsKilledMidFileGetsTheRestFromTheChief) {
  // The parent, a process of its own, is killed while its child streams
  // big.bin from it; the child turns to the chief and keeps what it has.
  // The parent is forked before any thread of this test starts.
  SlowSource source(chief_, text_, manifest_, kBig / 2, /*start=*/false);
  int chief = FreeLoopbackPort(), parent_port = FreeLoopbackPort();
  std::string parent = TempDir();
  RelayReceiveOptions receive = ReceiveInto(parent, {{"chief", source.port()}});
  receive.serve_port = parent_port;
  receive.serve_expect = 1;
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    std::FILE* out = std::fopen("/dev/null", "w");
    _exit(RunRelayReceive(receive, out));
  }
  ASSERT_GT(pid, 0);
  source.Start();
  std::FILE* server_out = std::tmpfile();
  std::thread server = ServeChief(chief, 1, server_out);
  std::string said;
  int exit = -1;
  std::thread child_node([&] {
    exit = Receive(ReceiveInto(node_, {{"n1", parent_port}, {"chief", chief}}), &said);
  });
  EXPECT_TRUE(WaitForSize(node_ + "/big.bin.fleetplan-part", kBig / 2));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  child_node.join();
  source.Release(/*break_off=*/true);
  server.join();
  std::fclose(server_out);
  EXPECT_EQ(exit, 0) << said;
  RelayReport report = ParseRelayReport(said);
  ASSERT_EQ(report.fallbacks.size(), 1u) << said;
  EXPECT_EQ(report.fallbacks[0].from, "n1");
  EXPECT_THAT(report.fallbacks[0].why, HasSubstr("n1 at 127.0.0.1:"));
  // a.txt came from the parent before big.bin.
  ASSERT_TRUE(report.received.has_value()) << said;
  EXPECT_EQ(report.received->files, 3u);
  EXPECT_EQ(report.received->bytes, 8388632u);
  EXPECT_THAT(report.received->from, ElementsAre("n1", "chief"));
  EXPECT_EQ(report.received->removed, 0u);
  ExpectChiefsTree(node_);
  // The parent left its part behind, never renamed into place.
  EXPECT_NE(access((parent + "/big.bin").c_str(), F_OK), 0);
}

TEST_F(RelayTest, AParentWhoseSourceFailsBreaksItsChildOffToTheNextSource) {
  // The parent's source breaks off and it has no other: it exits as
  // unreachable, and its child, mid-file, gets the rest from the chief.
  SlowSource source(chief_, text_, manifest_, kBig / 2);
  int chief = FreeLoopbackPort(), parent_port = FreeLoopbackPort();
  std::FILE* server_out = std::tmpfile();
  std::thread server = ServeChief(chief, 1, server_out);
  RelayReceiveOptions receive = ReceiveInto(TempDir(), {{"chief", source.port()}});
  receive.serve_port = parent_port;
  receive.serve_expect = 1;
  std::string parent_said, said;
  int parent_exit = -1, exit = -1;
  std::thread parent_node([&] { parent_exit = Receive(receive, &parent_said); });
  std::thread child_node([&] {
    exit = Receive(ReceiveInto(node_, {{"n1", parent_port}, {"chief", chief}}), &said);
  });
  EXPECT_TRUE(WaitForSize(node_ + "/big.bin.fleetplan-part", kBig / 2));
  source.Release(/*break_off=*/true);
  parent_node.join();
  child_node.join();
  server.join();
  std::fclose(server_out);
  EXPECT_EQ(parent_exit, kExitRelayUnreachable) << parent_said;
  EXPECT_THAT(parent_said, HasSubstr("the connection closed early"));
  EXPECT_EQ(exit, 0) << said;
  RelayReport report = ParseRelayReport(said);
  ASSERT_EQ(report.fallbacks.size(), 1u) << said;
  EXPECT_THAT(report.fallbacks[0].why, HasSubstr("n1 at 127.0.0.1:"));
  ASSERT_TRUE(report.received.has_value()) << said;
  EXPECT_THAT(report.received->from, ElementsAre("n1", "chief"));
  ExpectChiefsTree(node_);
}

}  // namespace
}  // namespace fleetplan
