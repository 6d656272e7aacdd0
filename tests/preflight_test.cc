// apply's preflight end to end on the Docker test bed: two node containers
// reached through the docker transport, one planted fault per test (a port
// taken on the chief, an unwritable workdir, a missing venv, a node with a
// different LibTorch, a listed GPU that is not there). Each apply must stop
// before launch, naming the node, what it found and the fix, and no rank
// may start. With nothing wrong, "auto" resolves to the containers' eth0
// and the ranks get it; `plan --check` finds the same and writes nothing.
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
  std::string program = "rank.sh";
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
  // log folder before it starts a rank: neither may exist on any node.
  void ExpectNoRankStarted() {
    for (int i = 0; i < kNodes; ++i) {
      EXPECT_THAT(Exec(i, "ls /tmp/rank-*.env 2>/dev/null; true"), IsOkAndHolds(""))
          << Node(i);
      EXPECT_THAT(Exec(i, absl::StrCat("ls -d ", kWorkdir, "/.fleetplan/nodes/*/logs "
                                       "2>/dev/null; true")),
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

  // Before anything is there: every check that can run passes, and the
  // nodes are left as they were.
  ToolResult check = Check(spec);
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_THAT(check.output, HasSubstr("fleetplan-agent is not on this node yet"));
  EXPECT_THAT(check.output, HasSubstr("every check passed on 2 nodes"));
  for (int i = 0; i < kNodes; ++i) {
    // The workdir can be created (it is not there yet), eth0 is found.
    EXPECT_THAT(check.output, testing::ContainsRegex(absl::StrCat("\n  ", Node(i),
                                                                  " +ok .*eth0\n")));
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
                                  "\n  ", Node(i), " +ok +skip .*eth0\n")));
    EXPECT_THAT(Exec(i, absl::StrCat("grep NCCL_SOCKET_IFNAME= /tmp/rank-", i, ".env")),
                IsOkAndHolds("NCCL_SOCKET_IFNAME=eth0"))
        << Node(i);
  }

  // Nothing changed: nothing runs again, the checks included.
  ToolResult again = RunTool({"tools/fleetplan-apply", "--json", spec}, absl::Seconds(120));
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_THAT(FinishedSteps(again.output).changed, IsEmpty()) << again.output;
}

TEST_F(PreflightTest, PortTakenOnTheChief) {
  // Our own listener holds the port in the chief's container.
  ASSERT_THAT(RunScript(absl::StrCat("docker cp -L tools/agent/fleetplan-agent ", Node(0),
                                     ":/tmp/squatter")),
              IsOk());
  ASSERT_THAT(RunScript(absl::StrCat("docker exec -d ", Node(0), " /tmp/squatter --probe-listen=",
                                     kPort, " --probe-expect=1000 --probe-timeout=300s "
                                     "--nowatch-stdin")),
              IsOk());
  std::string listening = absl::StrFormat(":%04X ", kPort);
  absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (!Exec(0, absl::StrCat("grep -q '", listening, "' /proc/net/tcp6 /proc/net/tcp")).ok() &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
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
  ToolResult check = Check(spec);
  EXPECT_EQ(check.status, 1) << check.output;
  EXPECT_THAT(check.output, HasSubstr(absl::StrCat(
                                "node '", Node(0), "', check workdir: /usr/fleetplan-preflight: "
                                "cannot be created: /usr is not writable by root (on a "
                                "read-only filesystem, mounted at /usr); expected a folder "
                                "root can write at this absolute path on every node; fix: "
                                "choose a workdir on a writable filesystem")));

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
  for (const ToolResult& result : {Check(spec), Apply(spec)}) {
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
  options.program = "train";
  options.env = "LD_LIBRARY_PATH = \"/opt/fp-alt\"\n";
  ToolResult apply = Apply(WriteSpec(options));
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output,
              HasSubstr(absl::StrCat("node '", Node(kNodes - 1), "', check libtorch: "
                                     "/opt/fp-alt/libtorch_cpu.so.1.13 (LibTorch 1.13, cksum ")));
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
