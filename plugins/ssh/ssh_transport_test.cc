// The ssh transport against real OpenSSH servers on 127.0.0.1.

#include "plugins/ssh/ssh_transport.h"

#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/ssh/ssh_groups.h"
#include "plugins/ssh/sshd_fixture.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The value, or the error as text, so a mismatch shows why.
std::string ValueOr(const absl::StatusOr<std::string>& value) {
  return value.ok() ? *value : value.status().ToString();
}

struct Result {
  int exit = -1;
  std::string output;
};

class SshTransportTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(MakeTempDir());
    auto sshd = LocalSshd::Start(*dir_);
    ASSERT_TRUE(sshd.ok()) << sshd.status();
    sshd_ = sshd->release();
  }
  static void TearDownTestSuite() {
    delete sshd_;
    delete dir_;
  }

  void SetUp() override {
    known_hosts_ = MakeTempDir() + "/known_hosts";
    EditSshGroups(spec_).groups = {
        SshGroup{"test", "root", sshd_->port(), sshd_->client_key(), known_hosts_, {}}};
    spec_.nodes = {NodeSpec{}};
    node().name = "node-a";
    node().address = "127.0.0.1";
    node().groups["ssh"] = "test";
    node().workdir = "/tmp";
  }

  NodeSpec& node() { return spec_.nodes[0]; }
  void TrustServer() { ASSERT_THAT(WriteFileAtomic(known_hosts_, sshd_->KnownHostsLine(), 0600), IsOk()); }

  absl::StatusOr<std::unique_ptr<Connection>> Connect(TransportOptions options = {}) {
    return transport_.Connect(spec_, node(), options);
  }

  static Result Run(Connection& connection, const CommandSpec& command,
                    const absl::Notification* cancel = nullptr) {
    Result result;
    auto status = connection.Run(
        command, [&](absl::string_view chunk) { result.output.append(chunk.data(), chunk.size()); }, cancel);
    EXPECT_THAT(status, IsOk());
    if (status.ok()) result.exit = *status;
    return result;
  }

  static std::string* dir_;
  static LocalSshd* sshd_;
  std::string known_hosts_;
  ClusterSpec spec_;
  SshTransport transport_{SshTransportOptions{"/dev/null", {absl::Seconds(2), absl::Seconds(1)}}};
};

std::string* SshTransportTest::dir_ = nullptr;
LocalSshd* SshTransportTest::sshd_ = nullptr;

TEST_F(SshTransportTest, RunsWithOutputExitCodeEnvAndCwd) {
  TrustServer();
  FP_ASSERT_OK_AND_ASSIGN(auto connection, Connect());
  Result result = Run(*connection, {"echo out; pwd; echo \"$GREETING\"; echo err >&2; exit 3",
                                    {{"GREETING", "hello there"}}, "/usr/share"});
  EXPECT_EQ(result.exit, 3);
  // stdout and stderr are separate streams: only each one's order is kept,
  // and stderr's line may arrive between two chunks of stdout.
  EXPECT_THAT(result.output, HasSubstr("err\n"));
  std::string stdout_only = absl::StrReplaceAll(result.output, {{"err\n", ""}});
  EXPECT_THAT(stdout_only, HasSubstr("out\n/usr/share\nhello there\n"));
}

TEST_F(SshTransportTest, ReusesOneSessionForManyCommands) {
  TrustServer();
  FP_ASSERT_OK_AND_ASSIGN(auto connection, Connect());
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(Run(*connection, {absl::StrCat("exit ", i)}).exit, i);
  }
  // One session: every command reports the same sshd connection.
  std::string first = Run(*connection, {"echo $SSH_CONNECTION"}).output;
  EXPECT_EQ(Run(*connection, {"echo $SSH_CONNECTION"}).output, first);
}

// Everything a stream's command printed until its output ended.
absl::StatusOr<std::string> ReadToEnd(CommandStream& stream) {
  std::string all;
  absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline) {
    absl::StatusOr<std::string> chunk = stream.Read(absl::Milliseconds(100));
    if (absl::IsOutOfRange(chunk.status())) return all;
    if (!chunk.ok()) return chunk.status();
    all += *chunk;
  }
  return absl::DeadlineExceededError(absl::StrCat("still open after: ", all));
}

TEST_F(SshTransportTest, AStreamCarriesStdinToStdoutAndKeepsStderrApart) {
  TrustServer();
  FP_ASSERT_OK_AND_ASSIGN(auto connection, Connect());
  // Reads two lines, answers each, then says goodbye on stderr and ends.
  FP_ASSERT_OK_AND_ASSIGN(
      auto stream,
      connection->OpenStream("read a; echo \"got $a\"; read b; echo \"got $b\"; echo bye >&2"));
  ASSERT_TRUE(stream->Write("one\n").ok());
  std::string first;
  while (first.find('\n') == std::string::npos) {
    FP_ASSERT_OK_AND_ASSIGN(std::string chunk, stream->Read(absl::Seconds(5)));
    first += chunk;
  }
  EXPECT_EQ(first, "got one\n");
  ASSERT_TRUE(stream->Write("two\n").ok());
  EXPECT_EQ(ValueOr(ReadToEnd(*stream)), "got two\n");
  EXPECT_EQ(stream->ErrorOutput(), "bye\n");
  // The connection goes on.
  EXPECT_EQ(Run(*connection, {"echo after"}).output, "after\n");
}

TEST_F(SshTransportTest, ClosingAStreamEndsItsCommand) {
  TrustServer();
  FP_ASSERT_OK_AND_ASSIGN(auto connection, Connect());
  std::string marker = MakeTempDir() + "/ended";
  {
    FP_ASSERT_OK_AND_ASSIGN(auto stream,
                            connection->OpenStream(absl::StrCat("cat >/dev/null; touch ", marker)));
    ASSERT_TRUE(stream->Write("x").ok());
  }
  // cat saw the end of its input: the command went on to its end.
  absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (access(marker.c_str(), F_OK) != 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(access(marker.c_str(), F_OK), 0);
}

TEST_F(SshTransportTest, HostileEnvValueArrivesByteForByte) {
  TrustServer();
  FP_ASSERT_OK_AND_ASSIGN(auto connection, Connect());
  const std::string hostile =
      "it's \"$(touch /tmp/fp-pwned)\" `id` $HOME ${PATH} \\n\\\\ ; | & * ?\n\ttab\x01 end'";
  Result result = Run(*connection, {"printf %s \"$HOSTILE\"", {{"HOSTILE", hostile}}, ""});
  EXPECT_EQ(result.exit, 0);
  EXPECT_EQ(result.output, hostile);
}

TEST_F(SshTransportTest, BadEnvNameIsRefused) {
  TrustServer();
  FP_ASSERT_OK_AND_ASSIGN(auto connection, Connect());
  EXPECT_THAT(connection->Run({"true", {{"A;B", "x"}}, ""}, [](absl::string_view) {}, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument, "A;B"));
}

TEST_F(SshTransportTest, MissingCwdFailsTheCommand) {
  TrustServer();
  FP_ASSERT_OK_AND_ASSIGN(auto connection, Connect());
  Result result = Run(*connection, {"echo ran", {}, "/no/such/dir"});
  EXPECT_NE(result.exit, 0);
  EXPECT_THAT(result.output, Not(HasSubstr("ran")));
}

TEST_F(SshTransportTest, SignalGivesExitStatus128PlusN) {
  TrustServer();
  FP_ASSERT_OK_AND_ASSIGN(auto connection, Connect());
  EXPECT_EQ(Run(*connection, {"kill -TERM $$"}).exit, 128 + 15);
}

TEST_F(SshTransportTest, FilesRoundTripWithModes) {
  TrustServer();
  FP_ASSERT_OK_AND_ASSIGN(auto connection, Connect());
  std::string local = MakeTempDir();
  std::string remote = MakeTempDir() + "/deep/root";
  std::string big(300 * 1024 + 7, 'x');  // more than one write chunk
  for (size_t i = 0; i < big.size(); i += 1000) big[i] = static_cast<char>('a' + i % 26);
  ASSERT_THAT(WriteFileAtomic(local + "/run.sh", "#!/bin/sh\necho hi\n", 0644), IsOk());
  ASSERT_THAT(WriteFileAtomic(local + "/big", big, 0644), IsOk());
  ASSERT_THAT(WriteFileAtomic(local + "/empty", "", 0644), IsOk());
  ASSERT_THAT(connection->PutFiles({{local + "/run.sh", "bin/run.sh", 0755, 0},
                                    {local + "/big", "data/a/b/big", 0600, 0},
                                    {local + "/empty", "empty", 0640, 0}},
                                   remote),
              IsOk());
  Result modes = Run(*connection, {"stat -c '%a %s %n' bin/run.sh data/a/b/big empty && ./bin/run.sh",
                                   {}, remote});
  EXPECT_EQ(modes.exit, 0);
  EXPECT_EQ(modes.output, absl::StrCat("755 18 bin/run.sh\n600 ", big.size(),
                                       " data/a/b/big\n640 0 empty\nhi\n"));
  EXPECT_EQ(ValueOr(connection->ReadFile(remote + "/data/a/b/big")), big);

  // WriteFile replaces atomically, creates parents, leaves no temporary.
  ASSERT_THAT(connection->WriteFile(remote + "/bin/run.sh", "new", 0700), IsOk());
  ASSERT_THAT(connection->WriteFile(remote + "/state/x/y.json", "{}", 0644), IsOk());
  EXPECT_EQ(ValueOr(connection->ReadFile(remote + "/bin/run.sh")), std::string("new"));
  EXPECT_EQ(ValueOr(connection->ReadFile(remote + "/state/x/y.json")), std::string("{}"));
  EXPECT_EQ(Run(*connection, {"stat -c %a bin/run.sh; ls -A bin", {}, remote}).output,
            "700\nrun.sh\n");

  EXPECT_THAT(connection->ReadFile(remote + "/nope"), StatusIs(absl::StatusCode::kNotFound, "node-a"));
  ASSERT_THAT(connection->RemoveFiles(remote, {"bin/run.sh", "empty", "never-there"}), IsOk());
  EXPECT_THAT(connection->ReadFile(remote + "/empty"), StatusIs(absl::StatusCode::kNotFound, "empty"));
  EXPECT_THAT(connection->PutFiles({{local + "/empty", "../escape", 0644, 0}}, remote),
              StatusIs(absl::StatusCode::kInvalidArgument, ".."));
  // Commands still run on the session that carries the SFTP channel.
  EXPECT_EQ(Run(*connection, {"test -e data/a/b/big", {}, remote}).exit, 0);
}

TEST_F(SshTransportTest, ManyFilesOfMixedSizesArriveWhole) {
  // More files than are opened ahead and more data than is let in flight,
  // so the upload and read pipelines both wait for replies on the way.
  TrustServer();
  FP_ASSERT_OK_AND_ASSIGN(auto connection, Connect());
  std::string local = MakeTempDir();
  std::string remote = MakeTempDir() + "/tree";
  std::vector<FileToSend> files;
  std::vector<std::string> contents;
  for (int i = 0; i < 300; ++i) {
    size_t size = i % 100 == 7 ? (1 << 20) + 3 * 128 * 1024 + i  // past the read-ahead
                  : i % 50 == 3 ? 2 * 128 * 1024                   // whole chunks
                  : i % 10 == 0 ? 0
                                : static_cast<size_t>(i) * 37;
    std::string content(size, '\0');
    for (size_t j = 0; j < size; ++j) content[j] = static_cast<char>((i * 131 + j * 7) % 251);
    std::string name = absl::StrCat("d", i % 7, "/f", i);
    ASSERT_THAT(WriteFileAtomic(absl::StrCat(local, "/f", i), content, 0644), IsOk());
    files.push_back({absl::StrCat(local, "/f", i), name, i % 3 == 0 ? 0755u : 0640u, size});
    contents.push_back(std::move(content));
  }
  ASSERT_THAT(connection->PutFiles(files, remote), IsOk());
  for (size_t i = 0; i < files.size(); ++i) {
    absl::StatusOr<std::string> got = connection->ReadFile(remote + "/" + files[i].path);
    ASSERT_TRUE(got.ok() && *got == contents[i]) << files[i].path << ": " << got.status();
  }
  Result listing = Run(*connection, {"find . -type f | wc -l; stat -c %a d0/f0 d1/f1", {}, remote});
  EXPECT_EQ(listing.output, "300\n755\n640\n") << "no temporaries left, modes kept";

  // More removals than may await replies at once, most of them missing.
  std::vector<std::string> doomed;
  for (const FileToSend& file : files) doomed.push_back(file.path);
  for (int i = 0; i < 1300; ++i) doomed.push_back(absl::StrCat("never/", i));
  ASSERT_THAT(connection->RemoveFiles(remote, doomed), IsOk());
  EXPECT_EQ(Run(*connection, {"find . -type f | wc -l", {}, remote}).output, "0\n");
}

TEST_F(SshTransportTest, UnreadableLocalFileIsNamedAndTheOthersArrive) {
  TrustServer();
  FP_ASSERT_OK_AND_ASSIGN(auto connection, Connect());
  std::string local = MakeTempDir();
  std::string remote = MakeTempDir() + "/root";
  ASSERT_THAT(WriteFileAtomic(local + "/a", "alpha", 0644), IsOk());
  ASSERT_THAT(WriteFileAtomic(local + "/b", "bravo", 0644), IsOk());
  EXPECT_THAT(connection->PutFiles({{local + "/a", "a", 0644, 5},
                                    {local + "/gone", "gone", 0644, 5},
                                    {local + "/b", "b", 0644, 5}},
                                   remote),
              StatusIs(absl::StatusCode::kNotFound, local + "/gone"));
  EXPECT_EQ(Run(*connection, {"ls -A", {}, remote}).output, "a\nb\n");
  EXPECT_EQ(ValueOr(connection->ReadFile(remote + "/b")), std::string("bravo"));
}

TEST_F(SshTransportTest, UnknownHostKeyIsRefusedWithFingerprint) {
  const std::string& fingerprint = sshd_->host_fingerprint();
  ASSERT_THAT(fingerprint, HasSubstr("SHA256:"));
  auto connection = Connect();
  EXPECT_THAT(connection, StatusIs(absl::StatusCode::kFailedPrecondition, "node-a"));
  EXPECT_THAT(connection, StatusIs(absl::StatusCode::kFailedPrecondition, fingerprint));
  EXPECT_THAT(connection,
              StatusIs(absl::StatusCode::kFailedPrecondition, "--accept-new-host-keys"));
}

TEST_F(SshTransportTest, AcceptNewRecordsTheKeyForLaterConnects) {
  TransportOptions accept;
  accept.accept_new_host_keys = true;
  FP_ASSERT_OK_AND_ASSIGN(auto first, Connect(accept));
  EXPECT_EQ(Run(*first, {"true"}).exit, 0);
  FP_ASSERT_OK_AND_ASSIGN(std::string recorded, ReadFileToString(known_hosts_));
  EXPECT_THAT(recorded, HasSubstr(absl::StrCat("[127.0.0.1]:", sshd_->port())));
  FP_ASSERT_OK_AND_ASSIGN(auto second, Connect());
  EXPECT_EQ(Run(*second, {"true"}).exit, 0);
}

TEST_F(SshTransportTest, ChangedHostKeyIsRefusedEvenWithAcceptNew) {
  std::string impostor = MakeTempDir() + "/impostor";
  ASSERT_THAT(MakeKeyPair(impostor), IsOk());
  FP_ASSERT_OK_AND_ASSIGN(std::string impostor_public, ReadFileToString(impostor + ".pub"));
  const std::string impostor_line =
      absl::StrCat("[127.0.0.1]:", sshd_->port(), " ", impostor_public);
  ASSERT_THAT(WriteFileAtomic(known_hosts_, impostor_line, 0600), IsOk());
  TransportOptions accept;
  accept.accept_new_host_keys = true;
  auto connection = Connect(accept);
  EXPECT_THAT(connection, StatusIs(absl::StatusCode::kPermissionDenied, "node-a"));
  EXPECT_THAT(connection,
              StatusIs(absl::StatusCode::kPermissionDenied, sshd_->host_fingerprint()));
  EXPECT_THAT(connection, StatusIs(absl::StatusCode::kPermissionDenied, "CHANGED"));
  // Nothing was overwritten.
  EXPECT_EQ(ValueOr(ReadFileToString(known_hosts_)), impostor_line);
}

TEST_F(SshTransportTest, WrongKeyIsAnAuthErrorNamingNodeAndUser) {
  TrustServer();
  std::string stranger = MakeTempDir() + "/stranger";
  ASSERT_THAT(MakeKeyPair(stranger), IsOk());
  EditSshGroups(spec_).groups[0].key_file = stranger;
  auto connection = Connect();
  EXPECT_THAT(connection, StatusIs(absl::StatusCode::kPermissionDenied, "node-a"));
  EXPECT_THAT(connection, StatusIs(absl::StatusCode::kPermissionDenied, "\"root\""));
}

TEST_F(SshTransportTest, NodeDownIsUnavailableWithinTheTimeout) {
  EditSshGroups(spec_).groups[0].port = FreeLoopbackPort();
  TransportOptions options;
  options.connect_timeout_s = 2;
  absl::Time start = absl::Now();
  EXPECT_THAT(Connect(options), StatusIs(absl::StatusCode::kUnavailable, "node-a"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

TEST_F(SshTransportTest, ConfigFileSuppliesAliasPortUserAndIdentity) {
  TrustServer();
  std::string config = MakeTempDir() + "/config";
  ASSERT_THAT(WriteFileAtomic(config,
                              absl::StrCat("Host trainbox\n  HostName 127.0.0.1\n  Port ",
                                           sshd_->port(), "\n  User root\n  IdentityFile ",
                                           sshd_->client_key(), "\n  UserKnownHostsFile ",
                                           known_hosts_, "\n"),
                              0600),
              IsOk());
  node().address = "trainbox";
  node().groups.clear();
  SshTransport transport(SshTransportOptions{config, {}});
  FP_ASSERT_OK_AND_ASSIGN(auto connection, transport.Connect(spec_, node(), {}));
  EXPECT_EQ(Run(*connection, {"id -un"}).output, "root\n");
}

TEST_F(SshTransportTest, CancelClosesStdinAndEndsTheRemoteCommand) {
  TrustServer();
  FP_ASSERT_OK_AND_ASSIGN(auto connection, Connect());
  std::string pid_file = MakeTempDir() + "/cat.pid";
  absl::Notification cancel;
  std::thread canceller([&] {
    // Cancel once the remote cat runs.
    while (!ReadFileToString(pid_file).ok()) absl::SleepFor(absl::Milliseconds(10));
    cancel.Notify();
  });
  CommandSpec cat{absl::StrCat("echo $$ > ", pid_file, "; exec cat")};
  cat.hold_stdin = true;
  Result result = Run(*connection, cat, &cancel);
  canceller.join();
  // cat ends by itself at EOF, before any signal (one would read 128+N),
  // however long the machine's load made that take.
  EXPECT_EQ(result.exit, 0);
  Result alive = Run(*connection, {absl::StrCat("kill -0 $(cat ", pid_file, ")")});
  EXPECT_NE(alive.exit, 0) << "remote cat still runs";
}

TEST_F(SshTransportTest, CancelStopsACommandThatIgnoresEof) {
  TrustServer();
  FP_ASSERT_OK_AND_ASSIGN(auto connection, Connect());
  std::string pid_file = MakeTempDir() + "/sleep.pid";
  absl::Notification cancel;
  cancel.Notify();
  CommandSpec sleeper{absl::StrCat("echo $$ > ", pid_file, "; exec sleep 60")};
  sleeper.hold_stdin = true;
  absl::Time start = absl::Now();
  std::string output;
  auto status = connection->Run(
      sleeper, [&](absl::string_view chunk) { output.append(chunk.data(), chunk.size()); },
      &cancel);
  ASSERT_THAT(status, IsOk());
  EXPECT_EQ(*status, 128 + 15);
  EXPECT_EQ(output, "");  // the pid line is not part of the output
  // The stdin grace (2 s), then SIGTERM: well before the sleep's own end
  // (60 s), with room for a machine busy with other tests.
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  Result alive = Run(*connection, {absl::StrCat("kill -0 $(cat ", pid_file, ")")});
  EXPECT_NE(alive.exit, 0) << "remote sleep still runs";
}

TEST_F(SshTransportTest, CancelSignalsAtOnceACommandThatDoesNotHoldStdin) {
  TrustServer();
  // A long stdin grace that a command not holding stdin must not wait for:
  // waiting for it would take over a minute, signalling at once a few
  // seconds at most, even on a machine busy with other tests.
  SshTransport patient{SshTransportOptions{"/dev/null", {absl::Seconds(90), absl::Seconds(1)}}};
  FP_ASSERT_OK_AND_ASSIGN(auto connection, patient.Connect(spec_, node(), {}));
  std::string pid_file = MakeTempDir() + "/sleep.pid";
  absl::Notification cancel;
  cancel.Notify();
  absl::Time start = absl::Now();
  Result result =
      Run(*connection, {absl::StrCat("echo $$ > ", pid_file, "; exec sleep 300")}, &cancel);
  EXPECT_EQ(result.exit, 128 + 15);
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  Result alive = Run(*connection, {absl::StrCat("kill -0 $(cat ", pid_file, ")")});
  EXPECT_NE(alive.exit, 0) << "remote sleep still runs";
}

TEST_F(SshTransportTest, LostConnectionIsUnavailableNamingTheNode) {
  TrustServer();
  FP_ASSERT_OK_AND_ASSIGN(auto connection, Connect());
  // The shell's parent is the sshd process serving this connection.
  EXPECT_THAT(connection->Run({"kill -9 $PPID; sleep 5"}, [](absl::string_view) {}, nullptr),
              StatusIs(absl::StatusCode::kUnavailable, "node-a"));
}

TEST_F(SshTransportTest, IsRegisteredAsSsh) {
  FP_ASSERT_OK_AND_ASSIGN(Transport * transport, TransportRegistry::Global().Find("ssh"));
  EXPECT_NE(transport, nullptr);
  node().workdir = "relative";
  EXPECT_THAT(transport->ValidateNode(spec_, node()),
              StatusIs(absl::StatusCode::kInvalidArgument, "node-a"));
}

}  // namespace
}  // namespace fleetplan
