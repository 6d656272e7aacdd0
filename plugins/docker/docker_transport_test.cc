// Against a real Docker daemon (tests/testbed/dockerd.sh ensure) and real
// containers of the test bed's node image, created here and removed after.

#include "plugins/docker/docker_transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/docker/docker_client.h"
#include "plugins/docker/docker_connection.h"
#include "plugins/docker/docker_settings.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Runs a test bed script (runfiles-relative) and returns its stdout, trimmed.
std::string RunScript(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  int status = pclose(pipe);
  EXPECT_EQ(status, 0) << command << ": " << out;
  return std::string(absl::StripAsciiWhitespace(out));
}

// Output of one Run, safe to read from another thread.
class Output {
 public:
  OutputCallback Callback() {
    return [this](absl::string_view chunk) {
      absl::MutexLock lock(&mu_);
      absl::StrAppend(&text_, chunk);
    };
  }
  bool WaitFor(const std::string& text, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto found = [&] { return text_.find(text) != std::string::npos; };
    return mu_.AwaitWithTimeout(absl::Condition(&found), timeout);
  }
  std::string text() {
    absl::MutexLock lock(&mu_);
    return text_;
  }

 private:
  absl::Mutex mu_;
  std::string text_;
};

ClusterSpec SpecFor(const std::string& address, const std::string& image,
                    const std::string& network) {
  ClusterSpec spec;
  spec.name = "docker-transport-test";
  EditDockerSettings(spec).image = image;
  EditDockerSettings(spec).network = network;
  EditDockerSettings(spec).create = true;
  NodeSpec node;
  node.name = address;
  node.address = address;
  node.transport = "docker";
  node.workdir = "/work";
  spec.nodes.push_back(node);
  return spec;
}

class DockerTransportTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string host = RunScript("tests/testbed/dockerd.sh ensure");
    setenv("DOCKER_HOST", host.c_str(), 1);
    image_ = new std::string(RunScript("tests/testbed/node_image.sh"));
    std::string suffix = absl::StrCat(getpid());
    spec_ = new ClusterSpec(SpecFor("fp-dtest-" + suffix, *image_,
                                    "fp-dtest-net-" + suffix));
    transport_ = new DockerTransport(
        DockerOptions{absl::Milliseconds(300), absl::Milliseconds(500)});
    auto connection = transport_->Connect(*spec_, spec_->nodes[0], {});
    ASSERT_THAT(connection, IsOk());
    connection_ = connection->release();
  }

  static void TearDownTestSuite() {
    delete connection_;
    if (transport_ != nullptr) {
      EXPECT_THAT(transport_->Destroy(*spec_, spec_->nodes[0]), IsOk());
    }
    delete transport_;
    delete spec_;
    delete image_;
  }

  void SetUp() override { ASSERT_NE(connection_, nullptr); }

  // Runs `command` to the end; returns exit status and output.
  static std::pair<int, std::string> Run(CommandSpec command) {
    Output output;
    absl::StatusOr<int> status = connection_->Run(command, output.Callback(), nullptr);
    EXPECT_THAT(status, IsOk());
    return {status.ok() ? *status : -1, output.text()};
  }

  static std::string* image_;
  static ClusterSpec* spec_;
  static DockerTransport* transport_;
  static Connection* connection_;
};

std::string* DockerTransportTest::image_ = nullptr;
ClusterSpec* DockerTransportTest::spec_ = nullptr;
DockerTransport* DockerTransportTest::transport_ = nullptr;
Connection* DockerTransportTest::connection_ = nullptr;

TEST_F(DockerTransportTest, RunStreamsOutputAndReturnsExitCode) {
  auto [status, output] = Run({"echo out; echo err >&2; exit 3"});
  EXPECT_EQ(status, 3);
  EXPECT_THAT(output, HasSubstr("out\n"));
  EXPECT_THAT(output, HasSubstr("err\n"));
}

TEST_F(DockerTransportTest, RunPassesLargeOutputWhole) {
  auto [status, output] = Run({"seq 1 200000"});
  EXPECT_EQ(status, 0);
  EXPECT_EQ(output.size(), 1288895u);  // digits and newlines of 1..200000
  EXPECT_THAT(output, testing::EndsWith("\n199999\n200000\n"));
}

TEST_F(DockerTransportTest, RunReportsDeathBySignal) {
  EXPECT_EQ(Run({"kill -KILL $$"}).first, 137);
}

TEST_F(DockerTransportTest, RunSetsEnvAndCwd) {
  CommandSpec command{R"cmd(printf '%s|%s' "$GREETING" "$(pwd)")cmd",
                      {{"GREETING", "hello there"}}, "/tmp"};
  EXPECT_EQ(Run(command), std::make_pair(0, std::string("hello there|/tmp")));
}

TEST_F(DockerTransportTest, HostileEnvValueArrivesByteForByte) {
  std::string hostile =
      "a'b\"c $(touch /tmp/pwned) `id` \\n\nsecond line;|&<>* $HOME ${X:-y} \t"
      "\xc3\xa9";
  CommandSpec command{R"cmd(printf '%s' "$HOSTILE"; test ! -e /tmp/pwned)cmd",
                      {{"HOSTILE", hostile}}};
  EXPECT_EQ(Run(command), std::make_pair(0, hostile));
}

TEST_F(DockerTransportTest, PutFilesCreatesRootAndKeepsModes) {
  std::string dir = getenv("TEST_TMPDIR");
  std::ofstream(dir + "/run.sh") << "#!/bin/sh\necho ran\n";
  std::ofstream(dir + "/data") << std::string(300000, 'd');
  std::ofstream(dir + "/secret") << "s3cret";
  std::vector<FileToSend> files = {
      {dir + "/run.sh", "bin/run.sh", 0755, 19},
      {dir + "/data", "data/deep/er/data", 0644, 300000},
      {dir + "/secret", "secret", 0600, 6},
  };
  std::string root = "/srv/put-files-test/root dir";
  ASSERT_THAT(connection_->PutFiles(files, root), IsOk());
  auto [status, output] = Run({"cd '/srv/put-files-test/root dir' && "
                               "stat -c '%a %s %n' bin/run.sh data/deep/er/data "
                               "secret && ./bin/run.sh"});
  EXPECT_EQ(status, 0);
  EXPECT_EQ(output,
            "755 19 bin/run.sh\n644 300000 data/deep/er/data\n600 6 secret\n"
            "ran\n");
  // Again, into the root that now exists: files are replaced.
  std::ofstream(dir + "/secret") << "changed";
  ASSERT_THAT(connection_->PutFiles({{dir + "/secret", "secret", 0600, 7}}, root),
              IsOk());
  EXPECT_THAT(connection_->ReadFile(root + "/secret"),
              IsOkAndHolds(std::string("changed")));
}

TEST_F(DockerTransportTest, WriteReadRemoveRoundTrip) {
  std::string content("line 1\n\0binary\xff", 15);
  std::string path = "/tmp/round/trip/file.bin";
  ASSERT_THAT(connection_->WriteFile(path, content, 0600), IsOk());
  EXPECT_THAT(connection_->ReadFile(path), IsOkAndHolds(content));
  // Mode kept, and no temporary file left beside it.
  EXPECT_EQ(Run({"stat -c %a /tmp/round/trip/file.bin; ls -A /tmp/round/trip"}),
            std::make_pair(0, std::string("600\nfile.bin\n")));
  ASSERT_THAT(connection_->WriteFile(path, "second", 0644), IsOk());
  EXPECT_THAT(connection_->ReadFile(path), IsOkAndHolds(std::string("second")));

  ASSERT_THAT(connection_->RemoveFiles("/tmp/round",
                                       {"trip/file.bin", "missing", "it's here?"}),
              IsOk());
  EXPECT_THAT(connection_->ReadFile(path),
              StatusIs(absl::StatusCode::kNotFound, path));
  EXPECT_THAT(connection_->RemoveFiles("/tmp/round", {"../etc/passwd"}),
              StatusIs(absl::StatusCode::kInvalidArgument, "../etc/passwd"));
}

TEST_F(DockerTransportTest, ReadMissingFileIsNotFound) {
  EXPECT_THAT(connection_->ReadFile("/no/such/file"),
              StatusIs(absl::StatusCode::kNotFound, "/no/such/file"));
}

TEST_F(DockerTransportTest, CancelClosesStdinOfHeldCommand) {
  Output output;
  absl::Notification cancel;
  absl::StatusOr<int> status;
  CommandSpec command{"echo started; cat; echo saw-eof"};
  command.hold_stdin = true;
  std::thread runner(
      [&] { status = connection_->Run(command, output.Callback(), &cancel); });
  ASSERT_TRUE(output.WaitFor("started\n", absl::Seconds(10)));
  cancel.Notify();
  runner.join();
  EXPECT_THAT(status, IsOkAndHolds(0));
  // Ended by EOF, not by the signals that follow the stdin grace: those
  // would end the shell before its last echo (no bound on time, which is
  // the machine's load).
  EXPECT_EQ(output.text(), "started\nsaw-eof\n");
}

TEST_F(DockerTransportTest, CancelSignalsCommandThatIgnoresStdin) {
  Output output;
  absl::Notification cancel;
  absl::StatusOr<int> status;
  // A child in the background and a marker to find both by.
  CommandSpec command{"sleep 1001 & echo started; sleep 1002; echo not-reached"};
  command.hold_stdin = true;
  std::thread runner(
      [&] { status = connection_->Run(command, output.Callback(), &cancel); });
  ASSERT_TRUE(output.WaitFor("started\n", absl::Seconds(10)));
  cancel.Notify();
  runner.join();
  EXPECT_THAT(status, IsOkAndHolds(143));  // SIGTERM
  EXPECT_THAT(output.text(), Not(HasSubstr("not-reached")));
  EXPECT_EQ(Run({"pgrep -f 'sleep 100[12]' || echo none"}),
            std::make_pair(0, std::string("none\n")));
}

TEST_F(DockerTransportTest, CancelSignalsAtOnceACommandThatDoesNotHoldStdin) {
  // A long stdin grace that a command not holding stdin must not wait for
  // (the bound below is half of it, so the machine's load does not decide).
  DockerTransport patient(DockerOptions{absl::Seconds(60), absl::Milliseconds(500)});
  FP_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Connection> connection,
                          patient.Connect(*spec_, spec_->nodes[0], {}));
  Output output;
  absl::Notification cancel;
  absl::StatusOr<int> status;
  CommandSpec command{"sleep 1003 & echo started; sleep 1004; echo not-reached"};
  std::thread runner([&] { status = connection->Run(command, output.Callback(), &cancel); });
  ASSERT_TRUE(output.WaitFor("started\n", absl::Seconds(10)));
  absl::Time cancelled = absl::Now();
  cancel.Notify();
  runner.join();
  EXPECT_LT(absl::Now() - cancelled, absl::Seconds(30));
  EXPECT_THAT(status, IsOkAndHolds(143));  // SIGTERM
  EXPECT_EQ(Run({"pgrep -f 'sleep 100[34]' || echo none"}),
            std::make_pair(0, std::string("none\n")));
}

TEST_F(DockerTransportTest, CreateTrueCreatesAndDestroyRemoves) {
  std::string suffix = absl::StrCat(getpid());
  ClusterSpec spec = SpecFor("fp-dtest-b-" + suffix, *image_,
                             "fp-dtest-b-net-" + suffix);
  const NodeSpec& node = spec.nodes[0];
  DockerClient client(*DockerClient::SocketFromEnvironment());
  EXPECT_THAT(client.InspectContainer(node.address),
              StatusIs(absl::StatusCode::kNotFound, node.address));

  FP_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Connection> connection,
                          transport_->Connect(spec, node, {}));
  FP_ASSERT_OK_AND_ASSIGN(nlohmann::json inspect,
                          client.InspectContainer(node.address));
  EXPECT_TRUE(inspect["State"]["Running"].get<bool>());
  EXPECT_TRUE(inspect["NetworkSettings"]["Networks"].contains(DockerSettingsOf(spec).network));
  // The node reaches the suite's container by name over the bridge network?
  // They are on different networks; it reaches itself by name, and runs the
  // host's binaries through the read-only mounts.
  Output output;
  EXPECT_THAT(connection->Run({"hostname; getent hosts \"$(hostname)\" >/dev/null"
                               " && echo resolves; touch /usr/x 2>/dev/null || "
                               "echo usr-read-only"},
                              output.Callback(), nullptr),
              IsOkAndHolds(0));
  EXPECT_EQ(output.text(), node.address + "\nresolves\nusr-read-only\n");

  // Connect again reuses it.
  EXPECT_THAT(transport_->Connect(spec, node, {}), IsOk());

  ASSERT_THAT(transport_->Destroy(spec, node), IsOk());
  EXPECT_THAT(client.InspectContainer(node.address),
              StatusIs(absl::StatusCode::kNotFound, node.address));
  EXPECT_THAT(client.InspectNetwork(DockerSettingsOf(spec).network),
              StatusIs(absl::StatusCode::kNotFound, DockerSettingsOf(spec).network));
  // The container went away under an open connection.
  EXPECT_THAT(connection->Run({"true"}, nullptr, nullptr),
              StatusIs(absl::StatusCode::kUnavailable, node.address));
  // Destroying again is fine.
  EXPECT_THAT(transport_->Destroy(spec, node), IsOk());
}

TEST_F(DockerTransportTest, ContainersOnTheNetworkReachEachOtherByName) {
  std::string suffix = absl::StrCat(getpid());
  ClusterSpec spec = SpecFor("fp-dtest-c-" + suffix, *image_, DockerSettingsOf(*spec_).network);
  const NodeSpec& node = spec.nodes[0];
  FP_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Connection> connection,
                          transport_->Connect(spec, node, {}));
  // A listener on the suite's node, reached by its name from the new one.
  Output listener_output;
  absl::Notification stop;
  std::thread listener([&] {
    CommandSpec command{
        "exec /usr/bin/python3 -c 'import socket\n"
        "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        "s.bind((\"0.0.0.0\", 7777)); s.listen(1); print(\"listening\", flush=True)\n"
        "c,_=s.accept(); print(c.recv(100).decode(), flush=True)'"};
    connection_->Run(command, listener_output.Callback(), &stop).IgnoreError();
  });
  ASSERT_TRUE(listener_output.WaitFor("listening", absl::Seconds(10)))
      << listener_output.text();
  Output output;
  std::string send = absl::StrCat(
      "/usr/bin/python3 -c 'import socket; s=socket.create_connection((\"",
      spec_->nodes[0].address, "\", 7777)); s.sendall(b\"hello-by-name\")'");
  EXPECT_THAT(connection->Run({send}, output.Callback(), nullptr),
              IsOkAndHolds(0))
      << output.text();
  EXPECT_TRUE(listener_output.WaitFor("hello-by-name", absl::Seconds(10)));
  stop.Notify();
  listener.join();
  EXPECT_THAT(transport_->Destroy(spec, node), IsOk());
}

TEST_F(DockerTransportTest, MissingImageIsNotFoundNamingIt) {
  ClusterSpec spec =
      SpecFor(absl::StrCat("fp-dtest-noimage-", getpid()), "fleetplan-missing:none", "");
  EXPECT_THAT(transport_->Connect(spec, spec.nodes[0], {}),
              StatusIs(absl::StatusCode::kNotFound, "fleetplan-missing:none"));
}

TEST_F(DockerTransportTest, MissingContainerWithoutCreateIsUnavailable) {
  ClusterSpec spec = SpecFor(absl::StrCat("fp-dtest-absent-", getpid()), *image_, "");
  EditDockerSettings(spec).create = false;
  EXPECT_THAT(transport_->Connect(spec, spec.nodes[0], {}),
              StatusIs(absl::StatusCode::kUnavailable, "create = true"));
}

TEST_F(DockerTransportTest, NoDaemonIsOneLineFailedPrecondition) {
  std::string saved = getenv("DOCKER_HOST");
  setenv("DOCKER_HOST", "unix:///nonexistent/fleetplan/docker.sock", 1);
  absl::StatusOr<std::unique_ptr<Connection>> connection =
      transport_->Connect(*spec_, spec_->nodes[0], {});
  setenv("DOCKER_HOST", saved.c_str(), 1);
  EXPECT_THAT(connection,
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "no Docker daemon answers at "
                       "unix:///nonexistent/fleetplan/docker.sock"));
  EXPECT_THAT(std::string(connection.status().message()),
              testing::AllOf(HasSubstr("dockerd"), Not(HasSubstr("\n"))));
}

TEST_F(DockerTransportTest, SocketPathTooLongForUnixSocketsIsRefused) {
  std::string saved = getenv("DOCKER_HOST");
  setenv("DOCKER_HOST", ("unix:///" + std::string(120, 'd') + "/docker.sock").c_str(), 1);
  absl::StatusOr<std::string> socket = DockerClient::SocketFromEnvironment();
  setenv("DOCKER_HOST", saved.c_str(), 1);
  EXPECT_THAT(socket, StatusIs(absl::StatusCode::kInvalidArgument,
                               "a unix socket path must be shorter than 108 bytes"));
}

TEST_F(DockerTransportTest, ValidateNodeNamesBadAddress) {
  ClusterSpec spec = SpecFor("not a name!", *image_, "");
  EXPECT_THAT(transport_->ValidateNode(spec, spec.nodes[0]),
              StatusIs(absl::StatusCode::kInvalidArgument, "not a name!"));
  spec.nodes[0].address = "ok-name";
  EditDockerSettings(spec).image = "";
  EXPECT_THAT(transport_->ValidateNode(spec, spec.nodes[0]),
              StatusIs(absl::StatusCode::kInvalidArgument, "image"));
}

TEST_F(DockerTransportTest, RegisteredAsDocker) {
  EXPECT_THAT(TransportRegistry::Global().Find("docker"), IsOk());
}

}  // namespace
}  // namespace fleetplan
