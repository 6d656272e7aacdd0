// apply end to end over ssh: three sshd nodes in containers (tests/testbed),
// the real trainer across them with Gloo, host key checking, a key that no
// node accepts, nodes that are down or hang, a re-apply that sends nothing,
// the sync relay (the files pass along a chain of nodes; identical trees
// through edits, deletions and renames; the middle node killed mid-sync),
// [keys] distribute, and a killed rank that stops every node.
//
// The job is the trainer binary this test depends on, synced as a path
// under workdir: the build phase's nested `bazel build` cannot run inside
// `bazel test`, whose server is busy running this test.

#include <signal.h>
#include <unistd.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/apply_harness.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/process/subprocess.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr int kNodes = 3;
constexpr char kWorkdir[] = "/work/fleetplan";
constexpr int kConnectTimeoutS = 3;
// Process start, spec and source hashing, and the nodes that do answer, on
// a loaded machine.
constexpr absl::Duration kConnectMargin = absl::Seconds(5);

// What a test changes in the spec it applies.
struct SpecOptions {
  std::string program = "./rank.sh";
  std::string args;                // the items of the TOML `args` array
  std::string fail_rank = "none";  // see tests/testdata/rank.sh
  bool distribute_keys = false;
  int wrong_key_node = -1;  // this node logs in with a key no node accepts
  // This node's ranks get `odd_env` (TOML inline-table items) from a group
  // of their own.
  int odd_node = -1;
  std::string odd_env;
  std::string env;          // more `NAME = "value"` lines for [env]
  std::string defaults;     // more lines for [defaults]
  std::string job;          // more lines for [job]
  std::string chief;        // more lines for the chief's [[nodes]] entry
};

// The synced tree under `root` as `mode path` lines, then `sha256  path`
// lines, each sorted, the node's own state folder left out: equal listings
// are equal trees. A few processes in all, not a few per file: the tests
// list 300-file trees on four machines.
std::string TreeListingScript(const std::string& root) {
  const std::string files = "find . -path ./.fleetplan -prune -o -type f";
  return absl::StrCat("cd ", root, " && ", files, " -printf '%m %p\\n' | LC_ALL=C sort && ",
                      files, " -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum");
}

// Writes `bytes` bytes that do not compress, from `seed`.
void WriteNoise(const std::string& path, size_t bytes, uint32_t seed, uint32_t mode = 0644) {
  std::string data(bytes, '\0');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (char& c : data) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x);
  }
  ASSERT_THAT(WriteFileAtomic(path, data, mode), IsOk());
}

// The `sync` event of an `apply --json` run (null when there is none).
nlohmann::json SyncEvent(const std::string& output) {
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    nlohmann::json event = nlohmann::json::parse(line, nullptr, false);
    if (event.is_object() && event.value("event", "") == "sync") return event;
  }
  return nullptr;
}

class SshApplyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::string> host = RunScript("tests/testbed/dockerd.sh ensure");
    ASSERT_THAT(host, IsOk());
    setenv("DOCKER_HOST", host->c_str(), 1);
    prefix_ = new std::string(absl::StrCat("fp-ssh-", getpid()));
    ASSERT_THAT(ReadCluster(), IsOk());
  }

  static void TearDownTestSuite() {
    if (prefix_ != nullptr) {
      EXPECT_THAT(RunScript(absl::StrCat("tests/testbed/cluster.sh down ", *prefix_)), IsOk());
    }
  }

  // Starts the nodes (or finds them running) and learns their addresses
  // and host keys, which change when a restarted node gets another IP.
  static absl::Status ReadCluster() {
    absl::StatusOr<std::vector<TestbedNode>> nodes = StartTestbedCluster(kNodes, *prefix_);
    if (!nodes.ok()) return nodes.status();
    std::string ips;
    for (const TestbedNode& node : *nodes) absl::StrAppend(&ips, " ", node.ip);
    // Read here with OpenSSH's own tool, so that a test does not take the
    // keys from the code it checks.
    absl::StatusOr<std::string> keys =
        RunScript(absl::StrCat("ssh-keyscan -T 10", ips, " 2>/dev/null"));
    if (!keys.ok()) return keys.status();
    for (const TestbedNode& node : *nodes) {
      if (!absl::StrContains(*keys, node.ip + " ssh-")) {
        return absl::InternalError(absl::StrCat("ssh-keyscan found no key for ", node.ip));
      }
    }
    delete nodes_;
    nodes_ = new std::vector<TestbedNode>(*std::move(nodes));
    delete host_keys_;
    host_keys_ = new std::string(absl::StrCat(*keys, "\n"));
    return absl::OkStatus();
  }

  void SetUp() override {
    ASSERT_NE(nodes_, nullptr) << "the test bed did not start";
    dir_ = MakeTempDir();
    known_hosts_ = dir_ + "/known_hosts";
    ASSERT_THAT(WriteFileAtomic(known_hosts_, *host_keys_, 0600), IsOk());
    ASSERT_THAT(CopyFileAtomic(Runfile("tests/testdata/rank.sh"), dir_ + "/src/rank.sh", 0755),
                IsOk());
    for (const char* script : {"lifecycle_rank.sh", "main_mpirun.py", "main_local_rank.py"}) {
      ASSERT_THAT(CopyFileAtomic(Runfile(absl::StrCat("tests/testdata/", script)),
                                 absl::StrCat(dir_, "/src/", script), 0755),
                  IsOk());
    }
    // Ranks of earlier tests recorded their env in the same place.
    for (int i = 0; i < kNodes; ++i) {
      ASSERT_THAT(Exec(i, "rm -rf /tmp/rank-*.env /tmp/life-*.env /tmp/hostile-*"), IsOk());
    }
  }

  // A job a failed test left running would hold the nodes for the next.
  void TearDown() override {
    if (!last_spec_.empty()) Job("stop", {last_spec_});
  }

  static const TestbedNode& Node(int i) { return (*nodes_)[i]; }

  absl::StatusOr<std::string> Exec(int node, const std::string& command) const {
    return ContainerExec(Node(node).name, command);
  }

  // Starts tests/testdata/stranger.py with `args` in a container on the
  // test bed's network that is no node of the spec (the host's programs,
  // read-only), recording into `out`; true once it runs.
  bool StartStranger(const std::string& name, const std::string& out, const std::string& args) {
    if (!MakeDirs(out).ok() ||
        !CopyFileAtomic(Runfile("tests/testdata/stranger.py"), out + "/stranger.py", 0755).ok()) {
      return false;
    }
    std::string mounts;
    for (const char* dir : {"/usr", "/lib", "/lib64", "/bin", "/sbin"}) {
      if (access(dir, F_OK) == 0) {
        absl::StrAppend(&mounts, " --mount type=bind,source=", dir, ",target=", dir, ",readonly");
      }
    }
    RunScript(absl::StrCat("docker rm -f ", name, " >/dev/null 2>&1")).IgnoreError();
    absl::Status started = RunScript(absl::StrCat(
        "docker run -d --name ", name, " --network ", *prefix_, "-net --label ",
        "fleetplan.testbed=", *prefix_, mounts, " -v ", out, ":/out ",
        "--entrypoint /usr/bin/python3 fleetplan-node:latest /out/stranger.py /out ", args))
                               .status();
    EXPECT_THAT(started, IsOk());
    absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!ReadFileToString(out + "/started").ok()) {
      if (!started.ok() || absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return true;
  }

  std::string WriteSpec(const SpecOptions& options) {
    std::string nodes;
    for (int i = 0; i < kNodes; ++i) {
      absl::StrAppend(&nodes, "[[nodes]]\nname = \"", Node(i).name, "\"\naddress = \"", Node(i).ip,
                      "\"\n", i == 0 ? "chief = true\n" + options.chief : "",
                      i == options.wrong_key_node ? "ssh = \"wrong\"\n" : "",
                      i == options.odd_node ? "ssh = \"odd\"\n" : "");
    }
    std::string groups = SshGroup("testbed", Node(0).key_file);
    if (options.odd_node >= 0) {
      absl::StrAppend(&groups, SshGroup("odd", Node(0).key_file), "env = { ", options.odd_env,
                      " }\n");
    }
    if (options.wrong_key_node >= 0) {
      std::string wrong = dir_ + "/wrong_key";
      EXPECT_THAT(RunScript(absl::StrCat("ssh-keygen -q -t ed25519 -N '' -f ", wrong)), IsOk());
      absl::StrAppend(&groups, SshGroup("wrong", wrong));
    }
    std::string spec = absl::StrCat(
        "name = \"ssh-e2e\"\n[defaults]\ntransport = \"ssh\"\nworkdir = \"", kWorkdir,
        "\"\nssh = \"testbed\"\n", options.defaults, nodes, groups,
        "[keys]\ndistribute = ", options.distribute_keys ? "true" : "false",
        "\n[sync]\nsource = \"src\"\n[env]\nFP_OUT = \"/tmp\"\nFAIL_RANK = ",
        TomlString(options.fail_rank), "\n", options.env, "[job]\nprogram = ",
        TomlString(options.program), "\nargs = [", options.args, "]\n", options.job);
    std::string path = dir_ + "/cluster.toml";
    EXPECT_THAT(WriteFileAtomic(path, spec, 0644), IsOk());
    last_spec_ = path;
    return path;
  }

  std::string SshGroup(const std::string& name, const std::string& key_file) const {
    return absl::StrCat("[ssh.", name,
                        "]\nuser = \"root\"\nport = 22\nkey_file = ", TomlString(key_file),
                        "\nknown_hosts = ", TomlString(known_hosts_), "\n");
  }

  static ToolResult Apply(std::vector<std::string> args,
                          absl::Duration timeout = absl::Seconds(120)) {
    args.insert(args.begin(), "tools/fleetplan-apply");
    return RunTool(args, timeout);
  }

  // Waits until every node's rank has started: rank.sh wrote its env (or
  // lifecycle_rank.sh, with `file` "life-%d-0").
  bool WaitForEveryRank(const std::string& file = "rank-%d") const {
    absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      bool all = true;
      for (int i = 0; i < kNodes && all; ++i) {
        std::string name = absl::StrReplaceAll(file, {{"%d", absl::StrCat(i)}});
        all = Exec(i, absl::StrCat("test -f /tmp/", name, ".env")).ok();
      }
      if (all) return true;
      absl::SleepFor(absl::Milliseconds(200));
    }
    return false;
  }

  // Expects no rank and no agent left in any container but `except`'s.
  void ExpectNothingRunning(int except = -1) const {
    for (int i = 0; i < kNodes; ++i) {
      if (i == except) continue;
      EXPECT_THAT(
          ContainerProcessesMentioningAny(Node(i).name, {"rank.sh", "fleetplan-agent", "train"}),
          IsEmpty())
          << Node(i).name;
    }
  }

  // True once no rank or agent is left in any container, polling until
  // `within` has passed.
  bool NothingRunningWithin(absl::Duration within) const {
    absl::Time deadline = absl::Now() + within;
    while (true) {
      bool none = true;
      for (int i = 0; i < kNodes && none; ++i) {
        none &=
            ContainerProcessesMentioningAny(Node(i).name, {"rank.sh", "fleetplan-agent"}).empty();
      }
      if (none) return true;
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(200));
    }
  }

  static ToolResult Job(const std::string& command, std::vector<std::string> args,
                        absl::Duration timeout = absl::Seconds(60)) {
    args.insert(args.begin(), "tools/fleetplan-" + command);
    return RunTool(args, timeout);
  }

  // `status --json`, parsed.
  static nlohmann::json Status(const std::string& spec) {
    ToolResult status = Job("status", {"--json", spec});
    EXPECT_EQ(status.status, 0) << status.output;
    return nlohmann::json::parse(status.output, nullptr, false);
  }

  // Polls `status` until the job's state is `state`; the last one read.
  static nlohmann::json WaitForState(const std::string& spec, const std::string& state,
                                     absl::Duration within) {
    absl::Time deadline = absl::Now() + within;
    nlohmann::json json;
    do {
      json = Status(spec);
      if (json.is_object() && json["state"] == state) break;
      absl::SleepFor(absl::Milliseconds(500));
    } while (absl::Now() < deadline);
    return json;
  }

  // Many small files in folders, a large one, executables.
  void WriteTree(size_t big_bytes) {
    for (int i = 0; i < 300; ++i) {
      WriteNoise(absl::StrCat(dir_, "/src/pkg", i % 7, "/sub", i % 3, "/f", i, ".dat"),
                 100 + 37 * i, i, i % 25 == 0 ? 0755 : 0644);
    }
    WriteNoise(dir_ + "/src/big.bin", big_bytes, 99);
  }

  // Every node holds exactly the source tree: same paths, modes and bytes.
  void ExpectSameTreeEverywhere() {
    absl::StatusOr<std::string> local = RunScript(TreeListingScript(dir_ + "/src"));
    ASSERT_THAT(local, IsOk());
    for (int i = 0; i < kNodes; ++i) {
      EXPECT_THAT(Exec(i, TreeListingScript(kWorkdir)), IsOkAndHolds(*local)) << Node(i).name;
    }
  }

  // The relayed nodes' files crossed this machine's link not at all; each
  // node got them from the one before it (a chain).
  void ExpectRelayed(const std::string& output) {
    nlohmann::json sync = SyncEvent(output);
    ASSERT_TRUE(sync.is_object()) << output;
    EXPECT_EQ(sync["nodes"].size(), kNodes) << output;
    for (const nlohmann::json& node : sync["nodes"]) {
      if (node["node"] == Node(0).name) {
        EXPECT_EQ(node["via"], "direct") << output;
        EXPECT_EQ(node["uplink_bytes"], node["bytes"]) << output;
        continue;
      }
      EXPECT_EQ(node["via"], "relay") << output;
      // Nothing but a changed launch agent, which comes from this machine
      // through the transport, never from another node.
      if (node["uplink_bytes"] != 0) {
        EXPECT_EQ(node["uplink_bytes"], AgentBytes()) << output;
      }
      for (int i = 1; i < kNodes; ++i) {
        if (node["node"] == Node(i).name) {
          EXPECT_EQ(node["from"], Node(i - 1).name) << output;
        }
      }
    }
  }

  // The size of the launch agent apply sends.
  static uint64_t AgentBytes() {
    return ReadFileToString(Runfile("tools/agent/fleetplan-agent")).value_or("").size();
  }

  static std::string* prefix_;
  static std::vector<TestbedNode>* nodes_;
  static std::string* host_keys_;  // known_hosts lines for every node
  std::string dir_;
  std::string known_hosts_;
  std::string last_spec_;
};

std::string* SshApplyTest::prefix_ = nullptr;
std::vector<TestbedNode>* SshApplyTest::nodes_ = nullptr;
std::string* SshApplyTest::host_keys_ = nullptr;

std::string NodeNamed(const TestbedNode& node) { return absl::StrCat("node '", node.name, "'"); }

TEST_F(SshApplyTest, TrainsTheTrainerAcrossThreeNodes) {
  ASSERT_THAT(CopyFileAtomic(Runfile("trainer/train"), dir_ + "/src/train", 0755), IsOk());
  SpecOptions options;
  options.program = "./train";
  options.args = "\"--backend=gloo\", \"--dataset=fashion-mnist\", \"--epochs=1\"";
  std::string spec = WriteSpec(options);
  ToolResult apply = PlanApplyAndExpectTrained(spec, kNodes, Node(0).name, 0.86);
  ASSERT_EQ(apply.status, 0);
  // Only rank 0 prints; each node's agent recorded that its rank ran there
  // and succeeded.
  for (int i = 0; i < kNodes; ++i) {
    std::string logs = absl::StrCat(kWorkdir, "/.fleetplan/nodes/", Node(i).name, "/logs");
    EXPECT_THAT(Exec(i, absl::StrCat("test -f ", logs, "/latest/rank-", i, ".log")), IsOk());
    FP_ASSERT_OK_AND_ASSIGN(std::string result, Exec(i, "cat " + logs + "/job.json"));
    nlohmann::json json = nlohmann::json::parse(result, nullptr, false);
    EXPECT_EQ(json["node"], Node(i).name) << result;
    EXPECT_EQ(json["state"], "succeeded") << result;
    EXPECT_EQ(json["exit_status"], 0) << result;
  }
}

TEST_F(SshApplyTest, SecondApplyOfAnUnchangedSpecSendsNothing) {
  std::string spec = WriteSpec({});
  ToolResult first = Apply({spec});
  ASSERT_EQ(first.status, 0) << first.output;
  for (int i = 0; i < kNodes; ++i) {
    ASSERT_THAT(Exec(i, absl::StrCat("rm /tmp/rank-", i, ".env")), IsOk()) << "rank " << i;
  }

  // What plan --refresh reads over ssh says so before apply does.
  ToolResult refresh = RunTool({"tools/fleetplan-plan", "--refresh", spec});
  ASSERT_EQ(refresh.status, 0) << refresh.output;
  EXPECT_THAT(refresh.output, HasSubstr(absl::StrCat("steps on ", kNodes, " nodes, ", kNodes,
                                                     " ranks: 0 to add, 0 to change, ",
                                                     4 * kNodes, " unchanged.\n")));

  ToolResult again = Apply({"--json", spec});
  ASSERT_EQ(again.status, 0) << again.output;
  StepEvents steps = FinishedSteps(again.output);
  // sync, environment, preflight and launch on each node.
  EXPECT_GE(steps.finished, 4 * kNodes) << again.output;
  EXPECT_THAT(steps.changed, IsEmpty()) << again.output;
  for (int i = 0; i < kNodes; ++i) {
    EXPECT_THAT(Exec(i, absl::StrCat("test ! -e /tmp/rank-", i, ".env")), IsOk())
        << "the job ran again on " << Node(i).name;
  }
}

TEST_F(SshApplyTest, RelayedSyncLeavesTheSameTreeEverywhereThroughEditsDeletionsAndRenames) {
  WriteTree(24 << 20);
  std::string spec = WriteSpec({});
  ToolResult first = Apply({"--json", spec});
  ASSERT_EQ(first.status, 0) << first.output;
  ExpectRelayed(first.output);
  ExpectSameTreeEverywhere();

  // Deletions, renames, a new executable, a mode change, an edit in the
  // middle of the large file.
  std::string src = dir_ + "/src";
  ASSERT_THAT(RunScript(absl::StrCat(
                  "cd ", src, " && rm pkg1/sub1/f1.dat pkg2/sub2/f2.dat pkg3/sub*/f1*.dat",
                  " && mv pkg4/sub2/f11.dat pkg4/renamed.dat && mv pkg5 pkg5-moved",
                  " && printf '#!/bin/sh\\necho new\\n' >new.sh && chmod 755 new.sh",
                  " && chmod 700 pkg0/sub1/f7.dat",
                  " && dd if=/dev/zero of=big.bin bs=1024 seek=9000 count=1024 conv=notrunc",
                  " 2>/dev/null")),
              IsOk());
  ToolResult second = Apply({"--json", spec});
  ASSERT_EQ(second.status, 0) << second.output;
  ExpectRelayed(second.output);
  ExpectSameTreeEverywhere();

  ToolResult third = Apply({"--json", spec});
  ASSERT_EQ(third.status, 0) << third.output;
  EXPECT_THAT(FinishedSteps(third.output).changed, IsEmpty()) << third.output;
  EXPECT_TRUE(SyncEvent(third.output).is_null()) << third.output;
}

// A stranger on the nodes' network (a container that is no node of the
// spec), started before apply and running throughout: it races the
// workers' hellos naming each of them with a stop and a failed rank's
// report, asks the relay for every entry of the tree, and floods the
// supervisor port with 64 MiB without a newline. The job is synced through
// the relay and succeeds on every node; the stranger receives none of the
// tree's bytes (a marker file's content never reaches it) and no answer at
// all, and the chief's agent cut its flood off at once.
TEST_F(SshApplyTest, AStrangerOnTheNodesNetworkCannotJoinStopOrReadTheJob) {
  WriteTree(8 << 20);
  const std::string marker = "marker-c0ffee-42: the user's private source";
  ASSERT_THAT(WriteFileAtomic(dir_ + "/src/marker.txt", marker, 0644), IsOk());
  SpecOptions options;
  options.fail_rank = "none";
  std::string spec = WriteSpec(options);
  std::string out = dir_ + "/stranger";
  std::string name = *prefix_ + "-stranger";
  ASSERT_TRUE(StartStranger(name, out,
                            absl::StrCat(Node(0).ip, " 29501 ", Node(1).name, " ", Node(2).name)));
  // The 8 MiB big.bin is new to every node (earlier tests synced another),
  // so the workers' share goes through the relay.
  ToolResult apply = Apply({"--json", spec});
  std::string log = Exec(0, absl::StrCat("cat ", kWorkdir, "/.fleetplan/nodes/", Node(0).name,
                                         "/logs/agent.log"))
                        .value_or("");
  RunScript(absl::StrCat("docker rm -f ", name, " >/dev/null 2>&1")).IgnoreError();

  ASSERT_EQ(apply.status, 0) << apply.output;
  nlohmann::json sync = SyncEvent(apply.output);
  ASSERT_TRUE(sync.is_object()) << apply.output;
  for (const nlohmann::json& node : sync["nodes"]) {
    if (node["node"] != Node(0).name) {
      EXPECT_EQ(node["via"], "relay") << apply.output;
    }
  }
  ExpectSameTreeEverywhere();
  for (int i = 0; i < kNodes; ++i) {
    EXPECT_TRUE(Exec(i, "test -f /tmp/rank-" + absl::StrCat(i) + ".env").ok()) << Node(i).name;
  }
  std::string relayed = ReadFileToString(out + "/relay.bin").value_or("");
  std::string answered = ReadFileToString(out + "/supervision.bin").value_or("");
  EXPECT_THAT(relayed, Not(HasSubstr("marker-c0ffee")));
  EXPECT_THAT(relayed, Not(HasSubstr("FPRELAY")));
  EXPECT_THAT(answered, Not(HasSubstr("welcome")));
  EXPECT_THAT(answered, Not(HasSubstr("marker-c0ffee")));
  // Cut off at the first bytes: far less than the 64 MiB it meant to send
  // (what it managed is what sat in the kernel's socket buffers).
  absl::StatusOr<std::string> flooded = ReadFileToString(out + "/flood.txt");
  ASSERT_THAT(flooded, IsOk());
  EXPECT_LT(std::stoll(*flooded), 16ll << 20) << *flooded;
  EXPECT_THAT(log, Not(HasSubstr("asks to stop the job")));
}

// An impostor at the address the workers take for the chief's (as one on
// the nodes' network could make itself by spoofing): it offers each
// worker, unasked, a relay's greeting and a tampered agent. No worker runs
// it or keeps it: they refuse it before reading it (it proves no key),
// sync directly, and hold apply's agent; their agents refuse it as their
// coordinator, so the job cannot start, and says why; nothing is left
// running.
TEST_F(SshApplyTest, AnImpostorAtTheChiefsAddressGetsNoTamperedAgentRunOnAWorker) {
  WriteTree(5 << 20);
  std::string out = dir_ + "/impostor";
  std::string name = *prefix_ + "-impostor";
  ASSERT_TRUE(StartStranger(name, out, "--impostor 29500 29501"));
  absl::StatusOr<std::string> address = RunScript(absl::StrCat(
      "docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' ", name));
  ASSERT_THAT(address, IsOk());
  SpecOptions options;
  options.chief =
      absl::StrCat("private_address = \"", absl::StripAsciiWhitespace(*address), "\"\n");
  options.job = "heartbeat_timeout = \"5s\"\n";
  std::string spec = WriteSpec(options);
  ToolResult apply = Apply({"--json", spec});
  std::string received = ReadFileToString(out + "/impostor.bin").value_or("");
  RunScript(absl::StrCat("docker rm -f ", name, " >/dev/null 2>&1")).IgnoreError();

  EXPECT_EQ(apply.status, 1) << apply.output;
  nlohmann::json sync = SyncEvent(apply.output);
  ASSERT_TRUE(sync.is_object()) << apply.output;
  for (const nlohmann::json& node : sync["nodes"]) {
    if (node["node"] == Node(0).name) continue;
    EXPECT_THAT(node["via"].get<std::string>(), HasSubstr("direct")) << node;
  }
  EXPECT_THAT(apply.output, HasSubstr("the TLS handshake with the job's key failed"));
  // A worker says it could not (cannot reach ...), or the chief that it
  // did not (did not reach ...), whichever comes first.
  EXPECT_THAT(apply.output, HasSubstr("reach the coordinator"));
  ExpectSameTreeEverywhere();
  EXPECT_FALSE(received.empty()) << "the workers never reached the impostor: it proves nothing";
  absl::StatusOr<std::string> apply_agent = RunScript(
      absl::StrCat("sha256sum <", Runfile("tools/agent/fleetplan-agent"), " | cut -c1-64"));
  ASSERT_THAT(apply_agent, IsOk());
  for (int i = 0; i < kNodes; ++i) {
    EXPECT_FALSE(Exec(i, "test -e /tmp/impostor-agent-ran").ok()) << Node(i).name;
    absl::StatusOr<std::string> digest = Exec(
        i, absl::StrCat("sha256sum <", kWorkdir, "/.fleetplan/bin/fleetplan-agent | cut -c1-64"));
    ASSERT_THAT(digest, IsOk()) << Node(i).name;
    EXPECT_EQ(absl::StripAsciiWhitespace(*digest), absl::StripAsciiWhitespace(*apply_agent))
        << Node(i).name;
  }
  ExpectNothingRunning();
}

// Another unprivileged user on a node (uid 4242: no account is needed to be
// someone else) while a job with a secret runs: it can read none of the
// job's state (the state folder, env.sh, the secrets file, the job key,
// job.json, the rank logs), find neither the key nor the secret on any
// command line, and signal none of the job's processes.
TEST_F(SshApplyTest, AnotherUserOnANodeCanReadNoneOfTheJobAndSignalNoneOfIt) {
  const std::string secret = "ssh-secret-5150-do-not-print";
  SpecOptions options;
  options.fail_rank = "none-fails";  // every rank keeps running
  options.job = "[secrets]\nAPI_TOKEN = { env = \"FP_SSH_E2E_SECRET\" }\n";
  std::string spec = WriteSpec(options);
  ToolResult apply =
      RunTool({"tools/fleetplan-apply", "--detach", spec}, absl::Seconds(120),
              {{"FP_SSH_E2E_SECRET", secret}});
  ASSERT_EQ(apply.status, 0) << apply.output;
  ASSERT_TRUE(WaitForEveryRank());
  const TestbedNode& node = Node(1);
  std::string state = absl::StrCat(kWorkdir, "/.fleetplan/nodes/", node.name);
  auto as_other = [&](const std::string& command) {
    return RunScript(absl::StrCat("docker exec -u 4242 ", node.name, " sh -c '", command, "'"));
  };
  // That user can run programs and read what is everyone's: what it
  // cannot read below is the job's doing.
  ASSERT_THAT(as_other(absl::StrCat("cat /etc/passwd >/dev/null && ls ", kWorkdir)), IsOk());
  for (const std::string& path :
       {absl::StrCat(kWorkdir, "/.fleetplan"), state + "/env.sh", state + "/secrets.env",
        state + "/job.key", state + "/logs/job.json", state + "/logs/latest/rank-1.log",
        state + "/logs/agent.log"}) {
    EXPECT_FALSE(as_other(absl::StrCat("cat ", path, " || ls ", path)).ok()) << path;
    EXPECT_THAT(Exec(1, absl::StrCat("test -e ", path)), IsOk()) << path << " is not there";
  }
  absl::StatusOr<std::string> key = Exec(1, absl::StrCat("cat ", state, "/job.key"));
  ASSERT_THAT(key, IsOk());
  absl::StatusOr<std::string> command_lines =
      as_other("cat /proc/[0-9]*/cmdline 2>/dev/null | tr \"\\000\" \" \"");
  ASSERT_THAT(command_lines, IsOk());
  EXPECT_THAT(*command_lines, HasSubstr("--key-file="));
  EXPECT_THAT(*command_lines, Not(HasSubstr(*key)));
  EXPECT_THAT(*command_lines, Not(HasSubstr(secret)));
  std::vector<std::string> ranks =
      ContainerProcessesMentioning(node.name, "rank.sh", absl::ZeroDuration());
  ASSERT_THAT(ranks, Not(IsEmpty()));
  absl::StatusOr<std::string> agent = Exec(1, "pgrep -o -f fleetplan-agent");
  ASSERT_THAT(agent, IsOk());
  EXPECT_FALSE(as_other(absl::StrCat("kill -0 ", *agent)).ok());
  EXPECT_FALSE(as_other(absl::StrCat("kill -TERM ", *agent)).ok());
  EXPECT_THAT(Exec(1, absl::StrCat("kill -0 ", *agent)), IsOk()) << "the agent runs on";
  EXPECT_EQ(Job("stop", {spec}).status, 0);
  ExpectNothingRunning();
}

// The others reach the chief at an address where nothing listens (their
// own loopback): each is synced directly, says so, and holds the same tree;
// preflight then names the unreachable chief.
TEST_F(SshApplyTest, NodesThatCannotReachTheChiefAreSyncedDirectlyAndSaySo) {
  WriteTree(4 << 20);
  SpecOptions options;
  options.chief = "private_address = \"127.0.0.1\"\n";
  std::string spec = WriteSpec(options);
  ToolResult apply = Apply({"--json", spec});
  EXPECT_EQ(apply.status, 1) << apply.output;
  nlohmann::json sync = SyncEvent(apply.output);
  ASSERT_TRUE(sync.is_object()) << apply.output;
  for (const nlohmann::json& node : sync["nodes"]) {
    if (node["node"] == Node(0).name) continue;
    EXPECT_EQ(node["via"], "direct (relay unreachable)") << node;
    // Everything from here once: no agent sent ahead of a fetch that fails.
    EXPECT_EQ(node["uplink_bytes"], node["bytes"]) << node;
  }
  EXPECT_THAT(apply.output, HasSubstr("(sent directly: relay: cannot reach " + Node(0).name));
  EXPECT_THAT(apply.output, HasSubstr(R"("check":"connect","event":"check")"));
  ExpectSameTreeEverywhere();
}

// The middle of the chain (node 1, which node 2 fetches from while it
// receives) is killed: its step fails naming it, node 2 gets the rest from
// the chief and says so, and the next apply completes node 1.
TEST_F(SshApplyTest, ARelayNodeKilledMidSyncFailsNamingItAndTheNextApplyCompletes) {
  WriteTree(48 << 20);
  std::string spec = WriteSpec({});
  // Slow the way into node 1 (the host side of its veth), so that its
  // fetch from the chief, and node 2's from it, last long enough to be cut.
  std::string veth = absl::StrCat(
      "PATH=$PATH:/usr/sbin:/sbin; ip -o link | awk -F': ' -v i=$(docker exec ", Node(1).name,
      " cat /sys/class/net/eth0/iflink) '$1 == i { sub(/@.*/, \"\", $2); print $2 }'");
  ASSERT_THAT(RunScript(absl::StrCat("/usr/sbin/tc qdisc replace dev $(", veth,
                                     ") root tbf rate 40mbit burst 64kb latency 500ms")),
              IsOk());
  ToolResult apply;
  std::thread runner([&] { apply = Apply({spec}); });
  // Killed once node 2 streams the large file from it.
  bool killed = false;
  for (absl::Time deadline = absl::Now() + absl::Seconds(60); !killed && absl::Now() < deadline;
       absl::SleepFor(absl::Milliseconds(50))) {
    killed = Exec(2, absl::StrCat("test -s ", kWorkdir, "/big.bin.fleetplan-part")).ok() &&
             Exec(1, absl::StrCat("pkill -9 -f '^", kWorkdir,
                                  "/\\.fleetplan/bin/fleetplan-agent relay-fetch '"))
                 .ok();
  }
  runner.join();
  EXPECT_THAT(RunScript(absl::StrCat("/usr/sbin/tc qdisc del dev $(", veth, ") root")), IsOk());

  ASSERT_TRUE(killed) << apply.output;
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr(NodeNamed(Node(1)) + ", phase sync")) << apply.output;
  EXPECT_THAT(apply.output, Not(HasSubstr(NodeNamed(Node(2)) + ", phase sync")))
      << apply.output;
  EXPECT_THAT(apply.output, HasSubstr("relay: falling back from " + Node(1).name))
      << apply.output;
  ExpectNothingRunning();

  ToolResult again = Apply({spec});
  ASSERT_EQ(again.status, 0) << again.output;
  ExpectSameTreeEverywhere();
}

TEST_F(SshApplyTest, DistributedKeyLetsTheChiefReachEveryNode) {
  // Without a final newline, which the key must not be glued to.
  const std::string kOtherLine = "# another key, kept";
  // The keys phase authorizes the chief's key on every node but the chief.
  auto chief_reaches = [&](int i) {
    return Exec(0, "ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o ConnectTimeout=10 root@" +
                       Node(i).ip + " true 2>&1");
  };
  // A chief key left by an earlier run would make the check below vacuous.
  ASSERT_THAT(Exec(0, "rm -f ~/.ssh/id_ed25519 ~/.ssh/id_ed25519.pub"), IsOk());
  std::vector<std::string> before(kNodes);
  for (int i = 1; i < kNodes; ++i) {
    ASSERT_THAT(Exec(i, "printf '%s' '" + kOtherLine + "' >> ~/.ssh/authorized_keys"), IsOk());
    FP_ASSERT_OK_AND_ASSIGN(before[i], Exec(i, "cat ~/.ssh/authorized_keys"));
    ASSERT_THAT(chief_reaches(i), Not(IsOk())) << Node(i).name;
  }

  SpecOptions options;
  options.distribute_keys = true;
  ToolResult apply = Apply({WriteSpec(options)});
  ASSERT_EQ(apply.status, 0) << apply.output;

  FP_ASSERT_OK_AND_ASSIGN(std::string chief_key, Exec(0, "cat ~/.ssh/id_ed25519.pub"));
  for (int i = 1; i < kNodes; ++i) {
    EXPECT_THAT(chief_reaches(i), IsOk()) << Node(i).name;
    FP_ASSERT_OK_AND_ASSIGN(std::string after, Exec(i, "cat ~/.ssh/authorized_keys"));
    // Every earlier line, in order, and then the chief's key.
    EXPECT_EQ(after, absl::StrCat(before[i], "\n", chief_key)) << Node(i).name;
  }
}

TEST_F(SshApplyTest, UnknownHostKeyIsRefusedUntilAccepted) {
  ASSERT_THAT(WriteFileAtomic(known_hosts_, "", 0600), IsOk());
  std::string spec = WriteSpec({});
  ToolResult refused = Apply({spec});
  EXPECT_EQ(refused.status, 1) << refused.output;
  EXPECT_THAT(refused.output, HasSubstr(NodeNamed(Node(0))));
  EXPECT_THAT(refused.output, HasSubstr("unknown host key SHA256:"));
  EXPECT_EQ(ReadFileToString(known_hosts_).value_or("?"), "") << "nothing is recorded";
  ExpectNothingRunning();

  ToolResult accepted = Apply({"--accept-new-host-keys", spec});
  ASSERT_EQ(accepted.status, 0) << accepted.output;
  // What was recorded is each node's real key.
  FP_ASSERT_OK_AND_ASSIGN(std::string recorded, ReadFileToString(known_hosts_));
  std::vector<std::string> lines = absl::StrSplit(recorded, '\n', absl::SkipEmpty());
  EXPECT_EQ(lines.size(), static_cast<size_t>(kNodes)) << recorded;
  for (const std::string& line : lines) {
    EXPECT_THAT(*host_keys_, HasSubstr(line + "\n"));
  }
  ToolResult again = Apply({spec});
  EXPECT_EQ(again.status, 0) << again.output;
}

TEST_F(SshApplyTest, ChangedHostKeyIsRefusedEvenWithAcceptNew) {
  // Node 1 now answers with a key other than the one recorded for it, as a
  // reinstalled node or a man in the middle would.
  std::string impostor = dir_ + "/impostor";
  ASSERT_THAT(RunScript(absl::StrCat("ssh-keygen -q -t ed25519 -N '' -f ", impostor)), IsOk());
  FP_ASSERT_OK_AND_ASSIGN(std::string impostor_key, ReadFileToString(impostor + ".pub"));
  std::vector<absl::string_view> fields = absl::StrSplit(impostor_key, ' ');
  ASSERT_GE(fields.size(), 2u);
  std::string known = absl::StrCat(Node(1).ip, " ", fields[0], " ", fields[1], "\n");
  for (absl::string_view line : absl::StrSplit(*host_keys_, '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, Node(1).ip + " ")) absl::StrAppend(&known, line, "\n");
  }
  ASSERT_THAT(WriteFileAtomic(known_hosts_, known, 0600), IsOk());

  ToolResult apply = Apply({"--accept-new-host-keys", WriteSpec({})});
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr(NodeNamed(Node(1))));
  EXPECT_THAT(apply.output, HasSubstr("host key CHANGED"));
  EXPECT_EQ(ReadFileToString(known_hosts_).value_or("?"), known) << "nothing is recorded";
  ExpectNothingRunning();
}

TEST_F(SshApplyTest, KeyNoNodeAcceptsIsAnAuthErrorNamingTheNode) {
  SpecOptions options;
  options.wrong_key_node = 2;
  ToolResult apply = Apply({WriteSpec(options)});
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr(NodeNamed(Node(2))));
  EXPECT_THAT(apply.output, HasSubstr("user \"root\" refused with key " + dir_ + "/wrong_key"));
  for (int i : {0, 1}) EXPECT_THAT(apply.output, Not(HasSubstr(NodeNamed(Node(i)))));
  ExpectNothingRunning();
}

TEST_F(SshApplyTest, KillingOneRankStopsAllRanksOnAllNodes) {
  SpecOptions options;
  options.fail_rank = "none-fails";  // every rank keeps running
  std::string spec = WriteSpec(options);
  ToolResult apply;
  std::thread runner([&] { apply = Apply({spec}); });
  bool started = WaitForEveryRank();
  // Only the rank: the agent's command line names rank.sh too.
  absl::StatusOr<std::string> killed =
      Exec(1, absl::StrCat("pkill -f '^/bin/sh ", kWorkdir, "/rank\\.sh$'"));
  runner.join();

  ASSERT_TRUE(started) << apply.output;
  ASSERT_THAT(killed, IsOk());
  EXPECT_EQ(apply.status, 128 + 15) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr("rank 1 on " + NodeNamed(Node(1)) + " failed"));
  ExpectNothingRunning();
}

// The last three take nodes away for a while.

// A worker cut off the network: its agent hears no coordinator and stops
// its ranks; the coordinator loses the worker and stops the job. Nothing
// runs anywhere within the heartbeat timeout and a margin, the cut-off
// node included, whether apply still watches or not.
TEST_F(SshApplyTest, AWorkerCutOffTheNetworkLeavesNothingRunningAnywhere) {
  SpecOptions options;
  options.fail_rank = "none-fails";  // every rank keeps running, silently
  options.job = "heartbeat_timeout = \"5s\"\n";
  std::string spec = WriteSpec(options);
  ToolResult apply;
  std::thread runner([&] { apply = Apply({spec}, absl::Seconds(180)); });
  bool started = WaitForEveryRank();
  // Gone without a word: no reset, no FIN, as when a node loses power.
  absl::Time start = absl::Now();
  absl::StatusOr<std::string> cut =
      RunScript(absl::StrCat("docker network disconnect ", *prefix_, "-net ", Node(1).name));
  bool nothing_left = NothingRunningWithin(absl::Seconds(12));
  absl::Duration took = absl::Now() - start;
  runner.join();
  ASSERT_THAT(RunScript(absl::StrCat("docker network connect ", *prefix_, "-net ", Node(1).name)),
              IsOk());
  ASSERT_THAT(ReadCluster(), IsOk());

  ASSERT_TRUE(started) << apply.output;
  ASSERT_THAT(cut, IsOk());
  EXPECT_TRUE(nothing_left) << "after " << took;
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr("apply failed: " + NodeNamed(Node(1)) +
                                      " failed: no heartbeat for 5s"));
  ExpectNothingRunning();
}

TEST_F(SshApplyTest, NodeThatIsDownIsNamedWithinTheConnectTimeout) {
  std::string spec = WriteSpec({});
  ASSERT_THAT(RunScript("docker stop -t 1 " + Node(1).name), IsOk());
  absl::Time start = absl::Now();
  ToolResult apply = Apply({absl::StrCat("--connect-timeout=", kConnectTimeoutS), spec});
  absl::Duration took = absl::Now() - start;
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr("cannot connect to " + NodeNamed(Node(1))));
  EXPECT_LT(took, absl::Seconds(kConnectTimeoutS) + kConnectMargin) << apply.output;
  ExpectNothingRunning(/*except=*/1);
  // Back for the tests that follow, possibly at another address.
  ASSERT_THAT(RunScript("docker start " + Node(1).name), IsOk());
  ASSERT_THAT(ReadCluster(), IsOk());
}

TEST_F(SshApplyTest, NodeThatHangsIsNamedWithinTheConnectTimeout) {
  // A frozen node accepts the TCP connection but never says a word.
  std::string spec = WriteSpec({});
  ASSERT_THAT(RunScript("docker pause " + Node(2).name), IsOk());
  absl::Time start = absl::Now();
  ToolResult apply = Apply({absl::StrCat("--connect-timeout=", kConnectTimeoutS), spec});
  absl::Duration took = absl::Now() - start;
  ASSERT_THAT(RunScript("docker unpause " + Node(2).name), IsOk());
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr("cannot connect to " + NodeNamed(Node(2))));
  EXPECT_LT(took, absl::Seconds(kConnectTimeoutS) + kConnectMargin) << apply.output;
  ExpectNothingRunning();
}

// Jobs as users write them: seed 002's script, unchanged, started as
// `python3` from the nodes' own environment.
TEST_F(SshApplyTest, TheSeedsPythonScriptRunsUnchangedFromTheNodesPython) {
  ASSERT_THAT(CopyFileAtomic(Runfile("tests/testdata/seed002_main.py"), dir_ + "/src/main.py",
                             0644),
              IsOk());
  SpecOptions options;
  options.program = "python3";
  options.args = "\"main.py\", \"--backend=gloo\"";
  options.job = "nproc_per_node = 2\n";
  std::string spec = WriteSpec(options);
  ToolResult apply = Apply({spec}, absl::Minutes(3));
  ASSERT_EQ(apply.status, 0) << apply.output;
  // Preflight says where it found the program on each node.
  ToolResult check = RunTool({"tools/fleetplan-plan", "--check", "--json", spec});
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_THAT(check.output, HasSubstr(R"("check":"program","event":"check","message":"python3 is /usr/bin/python3")"));
  for (int rank = 1; rank < 2 * kNodes; ++rank) {
    EXPECT_THAT(apply.output, HasSubstr(absl::StrCat("] Rank 0 sent data to Rank ", rank)));
    EXPECT_THAT(apply.output,
                HasSubstr(absl::StrCat("/", rank, "] Rank ", rank, " has received data from rank 0")));
  }
  ExpectNothingRunning();
}

TEST_F(SshApplyTest, ADdpScriptRunsAsPythonFromAVenvOnTheNodes) {
  for (int i = 0; i < kNodes; ++i) {
    ASSERT_THAT(Exec(i, "rm -rf /opt/venv && python3 -m venv --without-pip "
                        "--system-site-packages /opt/venv"),
                IsOk());
  }
  ASSERT_THAT(CopyFileAtomic(Runfile("tests/testdata/ddp_step.py"), dir_ + "/src/ddp_step.py",
                             0644),
              IsOk());
  SpecOptions options;
  options.defaults = "python = { venv = \"/opt/venv\" }\n";
  options.program = "python";
  options.args = "\"ddp_step.py\"";
  options.job = "nproc_per_node = 2\n";
  ToolResult apply = Apply({WriteSpec(options)}, absl::Minutes(3));
  for (int i = 0; i < kNodes; ++i) ASSERT_THAT(Exec(i, "rm -rf /opt/venv"), IsOk());
  ASSERT_EQ(apply.status, 0) << apply.output;
  for (int rank = 0; rank < 2 * kNodes; ++rank) {
    EXPECT_THAT(apply.output, HasSubstr(absl::StrCat("] rank ", rank, " of 6 local ", rank % 2,
                                                     " prefix /opt/venv same True")));
  }
  ExpectNothingRunning();
}

TEST_F(SshApplyTest, ANodeWhosePythonDiffersIsNamedBeforeLaunch) {
  // On node 2 a stand-in python3 comes first on the ranks' PATH.
  ASSERT_THAT(Exec(2, "mkdir -p /opt/odd && printf '#!/bin/sh\\necho Python 3.9.0\\n' > "
                      "/opt/odd/python3 && chmod +x /opt/odd/python3"),
              IsOk());
  SpecOptions options;
  options.program = "python3";
  options.args = "\"-c\", \"print(1)\"";
  options.odd_node = 2;
  options.odd_env = "PATH = \"/opt/odd:$PATH\"";
  ToolResult apply = Apply({WriteSpec(options)});
  ASSERT_THAT(Exec(2, "rm -rf /opt/odd"), IsOk());
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output,
              HasSubstr(absl::StrCat(NodeNamed(Node(2)), ", check interpreter: /opt/odd/python3 "
                                     "(Python 3.9.0); the other nodes (", Node(0).name, ", ",
                                     Node(1).name, ") run /usr/bin/python3 (Python 3.")));
  EXPECT_THAT(apply.output, Not(HasSubstr("launch:")));

  // A program found on no node is named too, before launch.
  SpecOptions nowhere;
  nowhere.program = "no-such-python";
  ToolResult missing = Apply({WriteSpec(nowhere)});
  EXPECT_EQ(missing.status, 1) << missing.output;
  EXPECT_THAT(missing.output, HasSubstr(absl::StrCat(NodeNamed(Node(0)),
                                                     ", check program: no-such-python is not on "
                                                     "this node's PATH")));
  ExpectNothingRunning();
}

// The job's life after apply: detached, read, stopped, restarted.

TEST_F(SshApplyTest, ADetachedJobRunsOnAndStatusLogsAndStopSeeIt) {
  SpecOptions options;
  options.program = "./lifecycle_rank.sh";
  options.env = "BUSY_SECONDS = \"600\"\n";
  std::string spec = WriteSpec(options);
  absl::Time start = absl::Now();
  ToolResult apply = Apply({"--detach", spec});
  ASSERT_EQ(apply.status, 0) << apply.output;
  EXPECT_LT(absl::Now() - start, absl::Seconds(60));
  EXPECT_THAT(apply.output, HasSubstr(" started on 3 nodes; it runs without apply"));

  nlohmann::json status = Status(spec);
  EXPECT_EQ(status["state"], "running") << status;
  EXPECT_EQ(status["generation"], 0) << status;
  ASSERT_EQ(status["nodes"].size(), static_cast<size_t>(kNodes)) << status;
  for (const nlohmann::json& node : status["nodes"]) {
    EXPECT_EQ(node["state"], "running") << node;
    EXPECT_EQ(node["ranks_alive"], 1) << node;
    EXPECT_EQ(node["run_id"], status["run_id"]) << node;
  }
  ToolResult text = Job("status", {spec});
  EXPECT_THAT(text.output, HasSubstr("job: running (run "));

  // Every rank's output, prefixed, from every node.
  ToolResult logs = Job("logs", {spec});
  ASSERT_EQ(logs.status, 0) << logs.output;
  for (int i = 0; i < kNodes; ++i) {
    EXPECT_THAT(logs.output, HasSubstr(absl::StrCat("[", Node(i).name, "/", i, "] rank ", i,
                                                    " generation 0 of 0 run ")));
  }
  ToolResult json_logs = Job("logs", {"--json", "--rank=1", spec});
  EXPECT_THAT(json_logs.output,
              HasSubstr(absl::StrCat(R"({"line":"rank 1 generation 0 of 0 run )")));
  EXPECT_THAT(json_logs.output, HasSubstr(absl::StrCat(R"("node":")", Node(1).name,
                                                       R"(","rank":1})")));
  ToolResult one = Job("logs", {"--node=" + Node(2).name, spec});
  EXPECT_THAT(one.output, Not(HasSubstr("[" + Node(1).name)));
  EXPECT_THAT(one.output, HasSubstr("[" + Node(2).name + "/2]"));

  // A second apply of the unchanged spec leaves the running job alone.
  ToolResult again = Apply({spec});
  EXPECT_EQ(again.status, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("nothing changed, nothing to do"));

  ToolResult stop = Job("stop", {"--json", spec});
  EXPECT_EQ(stop.status, 0) << stop.output;
  nlohmann::json stopped = nlohmann::json::parse(stop.output, nullptr, false);
  EXPECT_EQ(stopped["stopped"], true) << stop.output;
  EXPECT_EQ(stopped["nodes"].size(), static_cast<size_t>(kNodes)) << stop.output;
  EXPECT_THAT(stopped["nodes"][0]["said"].get<std::string>(), HasSubstr("stopped run "));
  ExpectNothingRunning();
  EXPECT_EQ(Status(spec)["state"], "stopped");
  ToolResult again_stop = Job("stop", {spec});
  EXPECT_EQ(again_stop.status, 0) << again_stop.output;
  EXPECT_THAT(again_stop.output, HasSubstr("nothing running (run "));
}

TEST_F(SshApplyTest, AKilledApplyLeavesTheJobToFinish) {
  SpecOptions options;
  options.program = "./lifecycle_rank.sh";
  options.env = "BUSY_SECONDS = \"6\"\n";
  std::string spec = WriteSpec(options);
  SubprocessOptions run;
  run.argv = {Runfile("tools/fleetplan-apply"), spec};
  run.env = {{"RUNFILES_DIR", getenv("TEST_SRCDIR")}};
  FP_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Subprocess> apply, Subprocess::Start(run));
  ASSERT_TRUE(WaitForEveryRank("life-%d-0"));
  apply->SignalGroup(SIGKILL);  // as a closed laptop lid would, without a word
  Subprocess* all[] = {apply.get()};
  while (!apply->TryWait().has_value()) {
    PumpOutput(all, {}, absl::Milliseconds(50), [](size_t, absl::string_view) {});
  }

  nlohmann::json status = WaitForState(spec, "succeeded", absl::Seconds(60));
  EXPECT_EQ(status["state"], "succeeded") << status;
  ToolResult logs = Job("logs", {spec});
  for (int i = 0; i < kNodes; ++i) {
    EXPECT_THAT(logs.output, HasSubstr(absl::StrCat("[", Node(i).name, "/", i, "] rank ", i,
                                                    " done")));
  }
  ExpectNothingRunning();
}

TEST_F(SshApplyTest, ARankThatFailsOnceRestartsEveryRankAtOnce) {
  SpecOptions options;
  options.program = "./lifecycle_rank.sh";
  options.fail_rank = "1";
  // Generation 0: the other ranks are busy for 10 minutes, in no collective.
  options.env = "BUSY_SECONDS = \"600\"\nRUN_SECONDS = \"1\"\n";
  options.job = "restarts = 1\n";
  std::string spec = WriteSpec(options);
  absl::Time start = absl::Now();
  ToolResult apply = Apply({spec});
  absl::Duration took = absl::Now() - start;
  ASSERT_EQ(apply.status, 0) << apply.output;
  EXPECT_LT(took, absl::Seconds(60)) << "well before the busy ranks would have noticed";
  for (int i = 0; i < kNodes; ++i) {
    FP_ASSERT_OK_AND_ASSIGN(std::string env, Exec(i, absl::StrCat("cat /tmp/life-", i, "-1.env")));
    EXPECT_THAT(env, HasSubstr("TORCHELASTIC_RESTART_COUNT=1\n")) << Node(i).name;
    EXPECT_THAT(env, HasSubstr("TORCHELASTIC_MAX_RESTARTS=1\n")) << Node(i).name;
    EXPECT_THAT(env, HasSubstr("TORCHELASTIC_RUN_ID=")) << Node(i).name;
    EXPECT_THAT(apply.output, HasSubstr(absl::StrCat("rank ", i, " done")));
  }
  EXPECT_EQ(Status(spec)["generation"], 1);
  ExpectNothingRunning();
}

TEST_F(SshApplyTest, ASpentRestartBudgetFailsWithTheFirstFailingRank) {
  SpecOptions options;
  options.program = "./lifecycle_rank.sh";
  options.fail_rank = "2";
  options.env = "FAIL_ALWAYS = \"1\"\nBUSY_SECONDS = \"600\"\nRUN_SECONDS = \"600\"\n";
  options.job = "restarts = 1\n";
  ToolResult apply = Apply({WriteSpec(options)});
  EXPECT_EQ(apply.status, 7) << apply.output;
  EXPECT_THAT(apply.output,
              HasSubstr("apply failed: rank 2 on " + NodeNamed(Node(2)) + " failed with exit status 7"));
  EXPECT_THAT(apply.output,
              HasSubstr(absl::StrCat("] --- restart 1 of 1 (rank 2 on ", NodeNamed(Node(2)),
                                     " failed with exit status 7) ---")));
  ExpectNothingRunning();
}

TEST_F(SshApplyTest, TheTrainerRestartedMidEpochContinuesFromItsCheckpoint) {
  ASSERT_THAT(CopyFileAtomic(Runfile("trainer/train"), dir_ + "/src/train", 0755), IsOk());
  ASSERT_THAT(CopyFileAtomic(Runfile("tests/testdata/train_killed_once.sh"),
                             dir_ + "/src/train_killed_once.sh", 0755),
              IsOk());
  std::string checkpoints = absl::StrCat("/shared/checkpoints-", getpid());
  SpecOptions options;
  options.program = "./train_killed_once.sh";
  options.args = absl::StrCat(
      "\"--backend=gloo\", \"--dataset=synthetic\", \"--steps-per-epoch=60\", \"--epochs=1\", "
      "\"--log-every=10\", \"--checkpoint-every=20\", \"--checkpoint-dir=", checkpoints, "\"");
  options.env = absl::StrCat("CHECKPOINT_DIR = ", TomlString(checkpoints), "\n");
  options.job = "restarts = 1\n";
  ToolResult apply = Apply({WriteSpec(options)}, absl::Minutes(5));
  ASSERT_EQ(apply.status, 0) << apply.output;
  std::vector<nlohmann::json> resumed = TrainerEvents(apply.output, "resume");
  ASSERT_FALSE(resumed.empty()) << apply.output;
  std::vector<nlohmann::json> done = TrainerEvents(apply.output, "done");
  ASSERT_EQ(done.size(), 1u) << apply.output;
  EXPECT_EQ(done[0]["step"], 60);
  // It went on from the checkpoint: fewer steps than a whole epoch after it.
  std::vector<nlohmann::json> steps = TrainerEvents(apply.output, "step");
  ASSERT_FALSE(steps.empty());
  // The kill is named from the kernel's record, in the restart's header too.
  EXPECT_THAT(apply.output, HasSubstr("--- restart 1 of 1 (rank 1 on " + NodeNamed(Node(1)) +
                                      " failed with exit status 137: killed by SIGKILL (signal "
                                      "9)) ---"));
  ASSERT_EQ(resumed.size(), 1u);
  EXPECT_GE(resumed[0]["step"].get<int>(), 20) << "from its mid-epoch checkpoint";
  EXPECT_LT(resumed[0]["step"].get<int>(), 60);
  ExpectNothingRunning();
}

}  // namespace
}  // namespace fleetplan

namespace fleetplan {
namespace {

// Seed 002's message passing in its mpirun variant, unchanged: the ranks
// read OMPI_COMM_WORLD_* and MASTER_ADDR/MASTER_PORT, as `mpirun -x` gives them.
TEST_F(SshApplyTest, TheSeedsMpirunScriptRunsUnchanged) {
  SpecOptions options;
  options.program = "/usr/bin/python3";
  options.args = "\"main_mpirun.py\", \"--backend=gloo\"";
  options.job = "nproc_per_node = 2\nlauncher = \"mpirun\"\n";
  ToolResult apply = Apply({WriteSpec(options)}, absl::Minutes(3));
  ASSERT_EQ(apply.status, 0) << apply.output;
  for (int rank = 1; rank < 2 * kNodes; ++rank) {
    EXPECT_THAT(apply.output, HasSubstr(absl::StrCat("Rank 0 sent data to Rank ", rank)));
    EXPECT_THAT(apply.output,
                HasSubstr(absl::StrCat("Rank ", rank, " has received data from rank 0")));
  }
}

// A script written for the old torch.distributed.launch requires
// `--local_rank`; fleetplan passes it after the script, before its args.
TEST_F(SshApplyTest, AScriptThatRequiresLocalRankRunsUnderDistributedLaunch) {
  SpecOptions options;
  options.program = "/usr/bin/python3";
  options.args = "\"main_local_rank.py\", \"--backend=gloo\"";
  options.job =
      "nproc_per_node = 2\nlauncher = \"distributed-launch\"\nlocal_rank_arg = \"--local_rank\"\n";
  ToolResult apply = Apply({WriteSpec(options)}, absl::Minutes(3));
  ASSERT_EQ(apply.status, 0) << apply.output;
  for (int rank = 0; rank < 2 * kNodes; ++rank) {
    EXPECT_THAT(apply.output,
                HasSubstr(absl::StrCat("Rank ", rank, " got --local_rank=", rank % 2)));
  }
  EXPECT_THAT(apply.output, HasSubstr(absl::StrCat("Rank ", 2 * kNodes - 1,
                                                   " has received data from rank 0")));
}

TEST_F(SshApplyTest, ExecRunsACommandOnEveryNodeAndNamesTheOneThatFails) {
  std::string spec = WriteSpec({});
  ToolResult hostname = Job("exec", {spec, "--", "hostname"});
  ASSERT_EQ(hostname.status, 0) << hostname.output;
  for (int i = 0; i < kNodes; ++i) {
    FP_ASSERT_OK_AND_ASSIGN(std::string name, Exec(i, "hostname"));
    EXPECT_THAT(hostname.output, HasSubstr(absl::StrCat("[", Node(i).name, "] ", name)));
  }
  EXPECT_THAT(hostname.output, HasSubstr("exec: 3 nodes: 3 exited 0, 0 failed"));

  ToolResult fails = Job("exec", {spec, "--node", Node(1).name, "--", "false"});
  EXPECT_EQ(fails.status, 1) << fails.output;
  EXPECT_THAT(fails.output, HasSubstr(absl::StrCat("[", Node(1).name, "] exit status 1")));
  EXPECT_THAT(fails.output, HasSubstr("exec: 1 node: 0 exited 0, 1 failed"));

  ToolResult json = Job("exec", {"--json", spec, "--", "sh", "-c", "echo $PWD; exit 4"});
  EXPECT_EQ(json.status, 4) << json.output;
  nlohmann::json parsed = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << json.output;
  EXPECT_EQ(parsed["exit_status"], 4);
  ASSERT_EQ(parsed["nodes"].size(), 3u);
  EXPECT_EQ(parsed["nodes"][2]["node"], Node(2).name);
  EXPECT_EQ(parsed["nodes"][2]["exit_status"], 4);
}

}  // namespace
}  // namespace fleetplan

namespace fleetplan {
namespace {

// Why a job failed (run as //tests:ssh_failure_test, on a test bed of its
// own): the exception a rank's script recorded with torch's @record, or
// the last lines of a rank without it, in apply's summary and in `status`;
// and torchrun's whole contract as the ranks see it.
class SshFailureTest : public SshApplyTest {
 protected:
  void CopyScript(const std::string& script) {
    ASSERT_THAT(CopyFileAtomic(Runfile(absl::StrCat("tests/testdata/", script)),
                               absl::StrCat(dir_, "/src/", script), 0644),
                IsOk());
  }

  // `status --json`'s "failure" once the job ended.
  static nlohmann::json Failure(const std::string& spec) {
    nlohmann::json status = Status(spec);
    EXPECT_EQ(status["state"], "failed") << status.dump();
    return status.value("failure", nlohmann::json());
  }
};

TEST_F(SshFailureTest, ARecordedExceptionIsTheFailure) {
  CopyScript("raise_recorded.py");
  const std::string secret = "ssh-secret-2718-do-not-print";
  SpecOptions options;
  options.program = "/usr/bin/python3";
  options.args = "\"raise_recorded.py\"";
  options.fail_rank = "1";
  options.job = "[secrets]\nAPI_TOKEN = { env = \"FP_SSH_FAILURE_SECRET\" }\n";
  std::string spec = WriteSpec(options);
  ToolResult apply = RunTool({"tools/fleetplan-apply", spec}, absl::Minutes(3),
                             {{"FP_SSH_FAILURE_SECRET", secret}});
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output,
              HasSubstr(absl::StrCat("rank 1 on node '", Node(1).name,
                                     "' failed with exit status 1: ValueError: bad shard 7 "
                                     "with token *** (at ",
                                     kWorkdir, "/raise_recorded.py:11 in load)")));
  EXPECT_THAT(apply.output, Not(HasSubstr(secret)));

  nlohmann::json failure = Failure(spec);
  EXPECT_EQ(failure["node"], Node(1).name) << failure.dump();
  EXPECT_EQ(failure["rank"], 1);
  EXPECT_EQ(failure["exit_status"], 1);
  EXPECT_EQ(failure["type"], "ValueError");
  EXPECT_EQ(failure["message"], "bad shard 7 with token ***");
  EXPECT_EQ(failure["file"], absl::StrCat(kWorkdir, "/raise_recorded.py"));
  EXPECT_EQ(failure["line"], 11);
  EXPECT_EQ(failure["function"], "load");
  ToolResult status = Job("status", {spec});
  EXPECT_THAT(status.output, HasSubstr("ValueError: bad shard 7 with token ***"));
  // The error file is the job's user's alone.
  EXPECT_THAT(Exec(1, absl::StrCat("stat -c %a ", kWorkdir, "/.fleetplan/nodes/", Node(1).name,
                                   "/logs/latest/rank-1.error-0.json")),
              IsOkAndHolds("600"));
  ExpectNothingRunning();
}

TEST_F(SshFailureTest, WithoutRecordTheRanksLastLinesAreTheFailure) {
  CopyScript("fail_plain.py");
  SpecOptions options;
  options.program = "/usr/bin/python3";
  options.args = "\"fail_plain.py\"";
  options.fail_rank = "2";
  std::string spec = WriteSpec(options);
  ToolResult apply = Apply({spec}, absl::Minutes(3));
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr("last lines of rank 2:\n  "));
  EXPECT_THAT(apply.output, HasSubstr("\n  ZeroDivisionError: division by zero"));

  nlohmann::json failure = Failure(spec);
  EXPECT_EQ(failure["node"], Node(2).name) << failure.dump();
  EXPECT_EQ(failure["rank"], 2);
  EXPECT_EQ(failure["type"], "");
  std::string tail = failure.value("log_tail", "");
  EXPECT_THAT(tail, HasSubstr("step 19\n"));
  EXPECT_THAT(tail, Not(HasSubstr("step 5\n")));  // ten lines, no more
  EXPECT_THAT(tail, ::testing::EndsWith("ZeroDivisionError: division by zero"));
  ExpectNothingRunning();
}

// A rank in a memory-limited container (256 MiB, as a cgroup limit is on a
// cluster) that the kernel's OOM killer ends: named as such, from the
// kernel's own count, with its peak RSS and the limit; never guessed from
// its 137.
TEST_F(SshFailureTest, ARankTheOomKillerEndedIsNamedWithItsPeakAndLimit) {
  CopyScript("oom_rank.py");
  std::string node = Node(1).name;
  ASSERT_THAT(RunScript(absl::StrCat("docker update --memory 256m --memory-swap 256m ", node,
                                     " >/dev/null")),
              IsOk());
  // Whatever happens below, the node's later cases get their memory back
  // (docker cannot take a limit away: one above the machine's memory).
  struct Restore {
    std::string node;
    ~Restore() {
      RunScript(absl::StrCat("docker update --memory 64g --memory-swap 64g ", node, " >/dev/null"))
          .IgnoreError();
    }
  } restore{node};
  SpecOptions options;
  options.program = "/usr/bin/python3";
  options.args = "\"oom_rank.py\"";
  options.env = "OOM_RANK = \"1\"\n";
  std::string spec = WriteSpec(options);
  ToolResult apply = Apply({spec}, absl::Minutes(3));
  EXPECT_EQ(apply.status, 137) << apply.output;
  EXPECT_THAT(apply.output,
              testing::ContainsRegex(absl::StrCat(
                  "rank 1 on node '", node,
                  "' failed with exit status 137: killed by SIGKILL \\(signal 9\\); the kernel's "
                  "OOM killer ended it: peak RSS [0-9.]+ MiB of a 256.0 MiB limit")));
  nlohmann::json failure = Failure(spec);
  EXPECT_EQ(failure["rank"], 1) << failure.dump();
  EXPECT_EQ(failure["signal"], 9);
  EXPECT_EQ(failure["oom_killed"], true);
  EXPECT_EQ(failure["memory_limit_bytes"], 256u << 20);
  EXPECT_GT(failure.value("peak_rss_bytes", uint64_t{0}), 128u << 20) << failure.dump();
  ExpectNothingRunning();
}

// Every variable of torchrun's contract, with torchrun's values, as the
// ranks see them and as `plan --json` said they would.
TEST_F(SshFailureTest, RanksSeeTorchrunsWholeContract) {
  std::string spec = WriteSpec({});
  ToolResult plan = RunTool({"tools/fleetplan-plan", "--json", spec});
  ASSERT_EQ(plan.status, 0) << plan.output;
  nlohmann::json planned = nlohmann::json::parse(plan.output)["ranks"];
  ToolResult apply = Apply({spec});
  ASSERT_EQ(apply.status, 0) << apply.output;
  for (int rank = 0; rank < kNodes; ++rank) {
    FP_ASSERT_OK_AND_ASSIGN(std::string text, Exec(rank, absl::StrCat("cat /tmp/rank-", rank,
                                                                        ".env")));
    std::map<std::string, std::string> seen;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      std::vector<std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
      if (kv.size() == 2) seen[kv[0]] = kv[1];
    }
    std::string run_id = seen["TORCHELASTIC_RUN_ID"];
    EXPECT_THAT(run_id, ::testing::MatchesRegex("[0-9]{8}T[0-9]{6}Z-[0-9]+"));
    for (const auto& [name, value] : planned[rank]["env"].items()) {
      EXPECT_EQ(seen[name], absl::StrReplaceAll(value.get<std::string>(), {{"<run-id>", run_id}}))
          << "rank " << rank << " " << name;
    }
    std::map<std::string, std::string> torchrun = {
        {"RANK", absl::StrCat(rank)},
        {"LOCAL_RANK", "0"},
        {"GROUP_RANK", absl::StrCat(rank)},
        {"ROLE_RANK", absl::StrCat(rank)},
        {"ROLE_NAME", "default"},
        {"LOCAL_WORLD_SIZE", "1"},
        {"WORLD_SIZE", "3"},
        {"GROUP_WORLD_SIZE", "3"},
        {"ROLE_WORLD_SIZE", "3"},
        {"MASTER_ADDR", Node(0).ip},
        {"TORCHELASTIC_RESTART_COUNT", "0"},
        {"TORCHELASTIC_MAX_RESTARTS", "0"},
        {"TORCHELASTIC_USE_AGENT_STORE", "False"},
        {"NCCL_ASYNC_ERROR_HANDLING", "1"},
        {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"},
        {"TORCHELASTIC_ERROR_FILE",
         absl::StrCat(kWorkdir, "/.fleetplan/nodes/", Node(rank).name, "/logs/", run_id,
                      "/rank-", rank, ".error-0.json")}};
    for (const auto& [name, value] : torchrun) {
      EXPECT_EQ(seen[name], value) << "rank " << rank << " " << name;
    }
    EXPECT_FALSE(seen["MASTER_PORT"].empty());
  }
}

// A hung job (run as //tests:ssh_hang_test, on a test bed of its own): 3
// nodes x 2 ranks (unless told otherwise) of tests/testdata/hang_rank.py,
// the last rank blocked in a function of its own, the others in a Gloo
// barrier, hang_timeout = 10s (torch's import uses CPU time, which is
// progress: the clock runs once every rank waits).
class SshHangTest : public SshFailureTest {
 protected:
  SpecOptions HangingJob(const std::string& more_job = "", int nproc_per_node = 2) {
    CopyScript("hang_rank.py");
    SpecOptions options;
    options.program = "/usr/bin/python3";
    options.args = "\"hang_rank.py\"";
    options.env = absl::StrCat("HANG_RANK = \"", kNodes * nproc_per_node - 1, "\"\n");
    options.job = absl::StrCat("nproc_per_node = ", nproc_per_node, "\nhang_timeout = \"10s\"\n",
                               more_job);
    return options;
  }

  void ExpectNoRankLeft() {
    ExpectNothingRunning();
    for (int i = 0; i < kNodes; ++i) {
      EXPECT_THAT(ContainerProcessesMentioning(Node(i).name, "hang_rank.py"), IsEmpty())
          << Node(i).name;
    }
  }

  std::string StacksFile(int node, int rank, int generation) const {
    return absl::StrCat(kWorkdir, "/.fleetplan/nodes/", Node(node).name, "/logs/latest/rank-",
                        rank, ".stacks-", generation, ".txt");
  }
};

// Node 1 lacks the stack tools (its PATH holds every program of /usr/bin
// but gdb and eu-stack): its ranks are named as skips, not left out.
TEST_F(SshHangTest, AHungJobFailsWith124NamingWhereEveryRankStood) {
  ASSERT_THAT(Exec(1, "rm -rf /opt/nostack && mkdir -p /opt/nostack && find /usr/bin -mindepth 1 "
                      "-maxdepth 1 ! -name gdb ! -name eu-stack -exec ln -s -t /opt/nostack {} +"),
              IsOk());
  ASSERT_THAT(Exec(2, "rm -f /tmp/hang-at"), IsOk());
  SpecOptions options = HangingJob();
  // The hanging rank marks when it begins to block (every rank is past the
  // rendezvous by then); no restart follows, so the mark changes nothing else.
  absl::StrAppend(&options.env, "HANG_ONCE_FILE = \"/tmp/hang-at\"\n");
  options.odd_node = 1;
  options.odd_env = "PATH = \"/opt/nostack\"";
  std::string spec = WriteSpec(options);
  // Start-up (sync, checks, six ranks' torch import: ~15 s alone), the 10 s,
  // gdb on every rank at once (up to its 60 s timeout), the stop: 219 s
  // beside the suite's other end-to-end tests on two cores. The bound means
  // "the hang was never noticed", nothing about speed.
  ToolResult apply = Apply({spec}, absl::Minutes(10));
  EXPECT_EQ(apply.status, 124) << apply.output;
  // Not noticed early: from the block to the stacks written at least the
  // hang_timeout passed (mtimes on the node). How long after it is the
  // machine's load and the stack tools' speed, which no test bounds.
  std::string stacks_written = absl::StrCat("$(stat -c %Y ", StacksFile(2, 5, 0), ")");
  absl::StatusOr<std::string> noticed_after =
      Exec(2, absl::StrCat("echo $((", stacks_written, " - $(stat -c %Y /tmp/hang-at)))"));
  ASSERT_THAT(noticed_after, IsOk());
  int seconds = -1;
  ASSERT_TRUE(absl::SimpleAtoi(*noticed_after, &seconds)) << *noticed_after;
  EXPECT_GE(seconds, 10);
  std::string a = Node(0).name, b = Node(1).name, c = Node(2).name;
  EXPECT_THAT(apply.output, HasSubstr("the job hung: no rank made progress for 10s"));
  EXPECT_THAT(apply.output,
              HasSubstr(absl::StrCat("\n  ranks 0,1,4 on ", a, ",", c,
                                     ": main (hang_rank.py:27) calling barrier\n")));
  EXPECT_THAT(apply.output, HasSubstr(absl::StrCat("\n  rank 5 on ", c,
                                                   ": block_forever (hang_rank.py:13) calling "
                                                   "sleep\n")));
  EXPECT_THAT(apply.output, HasSubstr(absl::StrCat("\n  ranks 2,3 on ", b,
                                                   ": no frame of the user's found\n")));
  EXPECT_THAT(apply.output, HasSubstr(absl::StrCat("\n  skip on ", b,
                                                   " (ranks 2,3): py-bt: gdb was not found on "
                                                   "PATH")));
  EXPECT_THAT(apply.output, HasSubstr(absl::StrCat("\n  skip on ", b,
                                                   " (ranks 2,3): native: eu-stack was not found "
                                                   "on PATH")));
  nlohmann::json failure = Failure(spec);
  EXPECT_EQ(failure["exit_status"], 124) << failure.dump();
  EXPECT_EQ(failure["summary"], "the job hung: no rank made progress for 10s");
  EXPECT_EQ(failure["stacks"]["groups"].size(), 3u) << failure.dump();
  EXPECT_EQ(failure["stacks"]["lines"].size(), 5u) << failure.dump();
  // The stacks are on the nodes, beside the rank logs, the job's user's alone.
  EXPECT_THAT(Exec(2, absl::StrCat("stat -c %a ", StacksFile(2, 5, 0))), IsOkAndHolds("600"));
  EXPECT_THAT(Exec(2, absl::StrCat("cat ", StacksFile(2, 5, 0))),
              IsOkAndHolds(HasSubstr("in block_forever")));
  EXPECT_THAT(Exec(0, absl::StrCat("cat ", StacksFile(0, 0, 0))),
              IsOkAndHolds(HasSubstr("in barrier")));
  ASSERT_THAT(Exec(1, "rm -rf /opt/nostack"), IsOk());
  ExpectNoRankLeft();
}

// One rank per node: two generations of torch's import and the stacks of
// every rank are what this case costs, and the grouping is the case above's.
TEST_F(SshHangTest, WithARestartLeftTheNextGenerationRuns) {
  ASSERT_THAT(Exec(2, "rm -f /tmp/hang-once"), IsOk());
  SpecOptions options = HangingJob("restarts = 1\n", /*nproc_per_node=*/1);
  absl::StrAppend(&options.env, "HANG_ONCE_FILE = \"/tmp/hang-once\"\n");
  ToolResult apply = Apply({WriteSpec(options)}, absl::Minutes(4));
  EXPECT_EQ(apply.status, 0) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr("] --- restart 1 of 1 (the job hung: no rank made "
                                      "progress for 10s) ---\n"));
  EXPECT_THAT(apply.output, HasSubstr("rank 2 passed the barrier"));
  EXPECT_THAT(Exec(2, absl::StrCat("test -f ", StacksFile(2, 2, 0))), IsOk());
  ExpectNoRankLeft();
}

// `stacks` on a running job (no hang_timeout: nothing stops it) shows the
// same grouping, and the job runs on. One rank per node: gdb reads
// LibTorch's symbols for each rank, and six at once on this shared machine
// took longer than its timeout.
TEST_F(SshHangTest, StacksShowsWhereARunningJobsRanksStandWithoutHarmingIt) {
  SpecOptions options = HangingJob();
  options.env = "HANG_RANK = \"2\"\n";
  options.job = "";
  std::string spec = WriteSpec(options);
  ToolResult apply = Apply({"--detach", spec});
  ASSERT_EQ(apply.status, 0) << apply.output;
  std::string a = Node(0).name, b = Node(1).name, c = Node(2).name;
  std::string barrier =
      absl::StrCat("ranks 0,1 on ", a, ",", b, ": main (hang_rank.py:27) calling barrier");
  std::string blocked =
      absl::StrCat("rank 2 on ", c, ": block_forever (hang_rank.py:13) calling sleep");
  // Every rank past torch's import and the rendezvous: it said so.
  absl::Time deadline = absl::Now() + absl::Seconds(90);
  while (absl::Now() < deadline) {
    absl::StatusOr<std::string> ready = RunScript(absl::StrCat(
        "for n in ", a, " ", b, " ", c, "; do docker exec $n sh -c 'cat ", kWorkdir,
        "/.fleetplan/nodes/*/logs/latest/rank-*.log'; done | grep -c ' ready$'"));
    if (ready.ok() && *ready == "3") break;
    absl::SleepFor(absl::Milliseconds(500));
  }
  absl::SleepFor(absl::Seconds(2));  // from the print to the barrier
  ToolResult stacks = Job("stacks", {spec}, absl::Seconds(180));
  EXPECT_EQ(stacks.status, 0) << stacks.output;
  EXPECT_EQ(stacks.output, absl::StrCat(barrier, "\n", blocked, "\n"));
  ToolResult json = Job("stacks", {"--json", spec}, absl::Seconds(180));
  ASSERT_EQ(json.status, 0) << json.output;
  nlohmann::json parsed = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << json.output;
  EXPECT_EQ(parsed.value("lines", nlohmann::json()), nlohmann::json({barrier, blocked}))
      << json.output;
  EXPECT_EQ(parsed.dump().find("\"function\":\"block_forever\"") != std::string::npos, true)
      << json.output;
  // Looked at twice, harmed not at all.
  nlohmann::json status = Status(spec);
  EXPECT_EQ(status["state"], "running") << status.dump();
  ASSERT_TRUE(status.is_object() && status["nodes"].is_array()) << status.dump();
  for (const auto& node : status["nodes"]) {
    EXPECT_EQ(node.value("ranks_alive", -1), 1) << status.dump();
  }
  EXPECT_EQ(Job("stop", {spec}).status, 0);
  ExpectNoRankLeft();
}

}  // namespace
}  // namespace fleetplan
