// apply's preflight end to end on the Docker test bed: two node containers
// reached through the docker transport, one planted fault per test (a port
// taken on the chief, an unwritable workdir, a missing venv, a node with a
// different LibTorch, a listed GPU that is not there, a slim node without
// /etc/alternatives and so without awk and libblas.so.3). Each apply must
// stop before launch, naming the node, what it found and the fix, and no
// rank may start. With nothing wrong, "auto" resolves to the containers'
// eth0 and the ranks get it, with `ip` on the nodes or not; `plan --check`
// finds the same and writes nothing.
//
// The containers are the test bed's (tests/testbed/cluster.sh), started
// before apply so that a test can plant its fault in one of them; apply
// uses them as they are ([docker] create = true creates only missing ones).

#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/apply_harness.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr int kNodes = 2;
constexpr char kWorkdir[] = "/work/fleetplan";
constexpr int kPort = 29555;

// What a test changes in the spec it applies.
struct SpecOptions {
  std::string workdir = kWorkdir;
  std::string program = "./rank.sh";
  std::string defaults;   // more [defaults] lines
  std::string last_node;  // more lines for the last node
  std::string env;        // more [env] lines
};

class PreflightTest : public DockerTestbedTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ready());
    dir_ = MakeTempDir();
    prefix_ = absl::StrCat("fp-pre-", getpid(), "-", ++clusters_);
    ASSERT_THAT(StartTestbedCluster(kNodes, prefix_), IsOk());
    ASSERT_THAT(CopyFileAtomic(Runfile("tests/testdata/rank.sh"), dir_ + "/src/rank.sh", 0755),
                IsOk());
  }

  void TearDown() override { EXPECT_THAT(StopTestbedCluster(prefix_), IsOk()); }

  std::string Node(int i) const { return absl::StrCat(prefix_, "-", i); }

  std::string WriteSpec(const SpecOptions& options) {
    std::string nodes;
    for (int i = 0; i < kNodes; ++i) {
      absl::StrAppend(&nodes, "[[nodes]]\naddress = \"", Node(i), "\"\n",
                      i == 0 ? "chief = true\n" : "", i == kNodes - 1 ? options.last_node : "");
    }
    std::string spec = absl::StrCat(
        "name = \"", prefix_, "\"\n[defaults]\ntransport = \"docker\"\nworkdir = ",
        TomlString(options.workdir), "\n", options.defaults, nodes,
        "[docker]\nimage = ", TomlString(image()), "\nnetwork = \"", prefix_,
        "-net\"\ncreate = true\n[sync]\nsource = \"src\"\n"
        "[env]\nHOSTILE = \"x\"\nFP_OUT = \"/tmp\"\nFAIL_RANK = \"none\"\n",
        options.env, "[network]\nnccl_socket_ifname = \"auto\"\nmaster_port = ", kPort,
        "\n[job]\nprogram = ", TomlString(options.program), "\n");
    std::string path = dir_ + "/cluster.toml";
    EXPECT_THAT(WriteFileAtomic(path, spec, 0644), IsOk());
    return path;
  }

  ToolResult Apply(const std::string& spec) {
    return RunTool({"tools/fleetplan-apply", spec}, absl::Seconds(180));
  }

  ToolResult Check(const std::string& spec) {
    return RunTool({"tools/fleetplan-plan", "--check", spec}, absl::Seconds(120));
  }

  absl::StatusOr<std::string> Exec(int node, const std::string& command) const {
    return ContainerExec(Node(node), command);
  }

  // rank.sh records its environment first thing, and the agent makes its
  // log folder before it starts a rank: neither may exist on any node. Nor
  // may a preflight agent (the chief's listener) be left running.
  void ExpectNoRankStarted() {
    for (int i = 0; i < kNodes; ++i) {
      EXPECT_THAT(ContainerProcessesMentioning(Node(i), "--preflight="), IsEmpty()) << Node(i);
      EXPECT_THAT(Exec(i, absl::StrCat("ls -d /tmp/rank-*.env ", kWorkdir,
                                       "/.fleetplan/nodes/*/logs 2>/dev/null; true")),
                  IsOkAndHolds(""))
          << Node(i);
    }
  }

  static int clusters_;
  std::string dir_;
  std::string prefix_;
};

int PreflightTest::clusters_ = 0;

TEST_F(PreflightTest, AutoPicksEth0AndTheRanksGetIt) {
  SpecOptions options;
  options.last_node = "gpus = [0]\n";
  std::string spec = WriteSpec(options);
  ToolResult plan = RunTool({"tools/fleetplan-plan", spec});
  ASSERT_EQ(plan.status, 0) << plan.output;
  EXPECT_THAT(plan.output, HasSubstr("NCCL_SOCKET_IFNAME=auto (resolved per node by preflight"));

  // Before anything is there the agent that runs the checks is not either:
  // each node says so (a skip, not a pass: exit 1, naming the node and
  // why), and is left as it was.
  ToolResult check = Check(spec);
  EXPECT_EQ(check.status, 1) << check.output;
  EXPECT_THAT(check.output, Not(HasSubstr("every check passed")));
  for (int i = 0; i < kNodes; ++i) {
    EXPECT_THAT(check.output,
                HasSubstr(absl::StrCat("skip ", Node(i), " agent: fleetplan-agent is not on "
                                       "this node yet")));
    EXPECT_THAT(check.output, HasSubstr(absl::StrCat("no check could run on node '", Node(i),
                                                     "': fleetplan-agent is not on this node "
                                                     "yet")));
    EXPECT_THAT(Exec(i, absl::StrCat("test -e ", kWorkdir, " && echo there; true")),
                IsOkAndHolds(""));
  }

  ToolResult apply = Apply(spec);
  ASSERT_EQ(apply.status, 0) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr("preflight checks\n"));
  EXPECT_THAT(apply.output,
              HasSubstr(absl::StrCat("skip ", Node(1),
                                     " gpus: no nvidia-smi on the ranks' PATH; GPU ids 0 not "
                                     "checked")));
  for (int i = 0; i < kNodes; ++i) {
    EXPECT_THAT(apply.output, testing::ContainsRegex(absl::StrCat(
                                  "\n  ", Node(i), " +ok +skip .*eth0( .*)?\n")));
    EXPECT_THAT(Exec(i, absl::StrCat("grep NCCL_SOCKET_IFNAME= /tmp/rank-", i, ".env")),
                IsOkAndHolds("NCCL_SOCKET_IFNAME=eth0"))
        << Node(i);
  }

  // Nothing changed: nothing runs again, the checks included.
  ToolResult again = RunTool({"tools/fleetplan-apply", "--json", spec}, absl::Seconds(120));
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_THAT(FinishedSteps(again.output).changed, IsEmpty()) << again.output;

  // With the agent there, plan --check runs every check and finds the same.
  ToolResult checked = Check(spec);
  EXPECT_EQ(checked.status, 0) << checked.output;
  EXPECT_THAT(checked.output, HasSubstr("every check passed on 2 nodes"));
  for (int i = 0; i < kNodes; ++i) {
    EXPECT_THAT(checked.output,
                testing::ContainsRegex(absl::StrCat("\n  ", Node(i), " +ok .*eth0( .*)?\n")));
  }
}

TEST_F(PreflightTest, WithoutIpTheInterfaceIsStillFound) {
  // The ranks' PATH holds every command of the host's but ip.
  for (int i = 0; i < kNodes; ++i) {
    ASSERT_THAT(Exec(i, "mkdir -p /opt/noip && find /usr/bin /usr/sbin -mindepth 1 -maxdepth 1 "
                        "! -name ip -exec ln -sf -t /opt/noip {} +"),
                IsOk());
    EXPECT_THAT(Exec(i, "PATH=/opt/noip; command -v ip || echo none"), IsOkAndHolds("none"));
  }
  SpecOptions options;
  options.env = "PATH = \"/opt/noip\"\n";
  ToolResult apply = Apply(WriteSpec(options));
  ASSERT_EQ(apply.status, 0) << apply.output;
  for (int i = 0; i < kNodes; ++i) {
    EXPECT_THAT(apply.output, testing::ContainsRegex(absl::StrCat("\n  ", Node(i),
                                                                  " +ok .*eth0( .*)?\n")));
    EXPECT_THAT(Exec(i, absl::StrCat("grep NCCL_SOCKET_IFNAME= /tmp/rank-", i, ".env")),
                IsOkAndHolds("NCCL_SOCKET_IFNAME=eth0"))
        << Node(i);
  }
}

TEST_F(PreflightTest, ASlimNodeWithoutAlternativesFailsNamingTheLibrary) {
  // The trainer needs libblas.so.3, a link through /etc/alternatives, as is
  // awk: a slim image has neither.
  ASSERT_THAT(CopyFileAtomic(Runfile("trainer/train"), dir_ + "/src/train", 0755), IsOk());
  const int slim = kNodes - 1;
  ASSERT_THAT(Exec(slim, "rm -rf /etc/alternatives"), IsOk());
  EXPECT_THAT(Exec(slim, "command -v awk || echo none"), IsOkAndHolds("none"));
  SpecOptions options;
  options.program = "./train";
  ToolResult apply = Apply(WriteSpec(options));
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output,
              HasSubstr(absl::StrCat("node '", Node(slim), "', check libraries: ", kWorkdir,
                                     "/train needs libblas.so.3")));
  EXPECT_THAT(apply.output, HasSubstr("not found on this node"));
  EXPECT_THAT(apply.output, Not(HasSubstr(absl::StrCat("node '", Node(0), "', check libraries"))));
  EXPECT_THAT(apply.output, Not(HasSubstr("] launch:")));
  ExpectNoRankStarted();
}

TEST_F(PreflightTest, PortTakenOnTheChief) {
  // Our own listeners hold both of the chief's ports in its container: the
  // workers' connect checks reach them at once rather than waiting out
  // their retries for a listener that never comes.
  ASSERT_THAT(RunScript(absl::StrCat("docker cp -L tools/agent/fleetplan-agent ", Node(0),
                                     ":/tmp/squatter")),
              IsOk());
  for (int port : {kPort, kPort + 1}) {
    ASSERT_THAT(RunScript(absl::StrCat("docker exec -d ", Node(0),
                                       " /tmp/squatter probe-listen --port=", port,
                                       " --expect=1000 --timeout=300s --watch-stdin=false")),
                IsOk());
    std::string listening = absl::StrFormat(":%04X ", port);
    absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (!Exec(0, absl::StrCat("grep -q '", listening, "' /proc/net/tcp6 /proc/net/tcp")).ok() &&
           absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(100));
    }
  }

  ToolResult apply = Apply(WriteSpec({}));
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output,
              HasSubstr(absl::StrCat("node '", Node(0), "', check port: port ", kPort,
                                     ": in use on this node (bind: Address already in use); "
                                     "expected it free for the rendezvous (MASTER_PORT); fix: ")));
  EXPECT_THAT(apply.output, HasSubstr("not tested: no preflight listener ran on the chief"));
  ExpectNoRankStarted();
}

TEST_F(PreflightTest, UnwritableWorkdir) {
  // /usr is the host's, mounted read-only in the containers.
  SpecOptions options;
  options.workdir = "/usr/fleetplan-preflight";
  std::string spec = WriteSpec(options);
  // plan --check: no agent can be there, so nothing is checked (nor passed).
  ToolResult check = Check(spec);
  EXPECT_THAT(check.output,
              HasSubstr(absl::StrCat("skip ", Node(0), " agent: fleetplan-agent is not on this "
                                     "node yet (/usr/fleetplan-preflight/.fleetplan/bin/")));

  ToolResult apply = Apply(spec);
  EXPECT_EQ(apply.status, 1) << apply.output;
  // The sync is the first to write there: it checks before sending.
  EXPECT_THAT(apply.output, HasSubstr(", phase sync: workdir: /usr/fleetplan-preflight: cannot be "
                                      "created or written by root ("));
  EXPECT_THAT(apply.output, HasSubstr("Read-only file system"));
  EXPECT_THAT(apply.output, HasSubstr("fix: choose a workdir on a writable filesystem"));
  EXPECT_THAT(apply.output, Not(HasSubstr("] launch:")));
  ExpectNoRankStarted();
}

TEST_F(PreflightTest, MissingVenv) {
  SpecOptions options;
  options.defaults = "python = { venv = \"/nonexistent\" }\n";
  std::string spec = WriteSpec(options);
  // apply first: its sync puts the agent there, which plan --check needs.
  ToolResult apply = Apply(spec);
  for (const ToolResult& result : {apply, Check(spec)}) {
    EXPECT_EQ(result.status, 1) << result.output;
    for (int i = 0; i < kNodes; ++i) {
      EXPECT_THAT(result.output,
                  HasSubstr(absl::StrCat("node '", Node(i), "', check python: venv /nonexistent "
                                         "does not exist; expected a python venv at /nonexistent "
                                         "on every node; fix: create it there")));
    }
  }
  ExpectNoRankStarted();
}

TEST_F(PreflightTest, ADifferentLibtorchOnOneNode) {
  // The trainer links libtorch_cpu.so.1.13; on the last node a stand-in
  // comes first on LD_LIBRARY_PATH.
  ASSERT_THAT(CopyFileAtomic(Runfile("trainer/train"), dir_ + "/src/train", 0755), IsOk());
  ASSERT_THAT(Exec(kNodes - 1, "mkdir -p /opt/fp-alt && "
                               "cp /lib/x86_64-linux-gnu/libz.so.1 /opt/fp-alt/libtorch_cpu.so.1.13"),
              IsOk());
  SpecOptions options;
  options.program = "./train";
  options.env = "LD_LIBRARY_PATH = \"/opt/fp-alt\"\n";
  ToolResult apply = Apply(WriteSpec(options));
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output,
              HasSubstr(absl::StrCat("node '", Node(kNodes - 1), "', check libtorch: "
                                     "/opt/fp-alt/libtorch_cpu.so.1.13 (LibTorch 1.13, xxh3 ")));
  EXPECT_THAT(apply.output, HasSubstr(absl::StrCat("the other nodes (", Node(0),
                                                   ") load /")));
  EXPECT_THAT(apply.output, HasSubstr("expected the same LibTorch on every node; fix: install"));
  ExpectNoRankStarted();
}

TEST_F(PreflightTest, AListedGpuThatIsNotThere) {
  // A stand-in nvidia-smi with GPUs 0 and 1, first on the ranks' PATH.
  ASSERT_THAT(WriteFileAtomic(dir_ + "/src/fakebin/nvidia-smi", "#!/bin/sh\nprintf '0\\n1\\n'\n",
                              0755),
              IsOk());
  SpecOptions options;
  options.last_node = "gpus = [0, 1, 3]\n";
  options.env = absl::StrCat("PATH = \"", kWorkdir, "/fakebin:/usr/local/bin:/usr/bin:/bin\"\n");
  ToolResult apply = Apply(WriteSpec(options));
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output,
              HasSubstr(absl::StrCat("node '", Node(kNodes - 1), "', check gpus: GPU 3 not found: "
                                     "nvidia-smi lists 0,1; expected every id in gpus = "
                                     "[0, 1, 3]; fix: list only GPUs this node has")));
  ExpectNoRankStarted();
}

}  // namespace
}  // namespace fleetplan
