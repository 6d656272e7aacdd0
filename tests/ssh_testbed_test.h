#ifndef FLEETPLAN_TESTS_SSH_TESTBED_TEST_H_
#define FLEETPLAN_TESTS_SSH_TESTBED_TEST_H_

// The fixture of the end-to-end tests over ssh: three sshd nodes in
// containers (tests/testbed), a spec written per test, and the checks
// they share. Each test target that includes it starts its own nodes, so
// the targets run side by side.

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
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
#include "tools/util/status_matchers.h"

namespace fleetplan {

inline constexpr int kNodes = 3;
inline constexpr char kWorkdir[] = "/work/fleetplan";
inline constexpr int kConnectTimeoutS = 3;
// Process start, spec and source hashing, and the nodes that do answer, on
// a loaded machine.
inline constexpr absl::Duration kConnectMargin = absl::Seconds(5);

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

// The synced tree under `root` as `mode sha256 path` lines, sorted, the
// node's own state folder left out: equal listings are equal trees.
inline std::string TreeListingScript(const std::string& root) {
  return absl::StrCat("cd ", root, " && find . -path ./.fleetplan -prune -o -type f -print",
                      " | sort | while read -r f; do echo \"$(stat -c %a \"$f\") ",
                      "$(sha256sum <\"$f\" | cut -c1-64) $f\"; done");
}

// Writes `bytes` bytes that do not compress, from `seed`.
inline void WriteNoise(const std::string& path, size_t bytes, uint32_t seed, uint32_t mode = 0644) {
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
inline nlohmann::json SyncEvent(const std::string& output) {
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
      for (const char* program : {"rank.sh", "fleetplan-agent", "train"}) {
        EXPECT_THAT(ContainerProcessesMentioning(Node(i).name, program), ::testing::IsEmpty())
            << Node(i).name;
      }
    }
  }

  // True once no rank or agent is left in any container, polling until
  // `within` has passed.
  bool NothingRunningWithin(absl::Duration within) const {
    absl::Time deadline = absl::Now() + within;
    while (true) {
      bool none = true;
      for (int i = 0; i < kNodes && none; ++i) {
        for (const char* program : {"rank.sh", "fleetplan-agent"}) {
          none &= ContainerProcessesMentioning(Node(i).name, program).empty();
        }
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
      EXPECT_THAT(RunScript(absl::StrCat("docker exec ", Node(i).name, " cat ", kWorkdir,
                                         "/big.bin | cmp - ", dir_, "/src/big.bin")),
                  IsOk())
          << Node(i).name;
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

  inline static std::string* prefix_ = nullptr;
  inline static std::vector<TestbedNode>* nodes_ = nullptr;
  // known_hosts lines for every node
  inline static std::string* host_keys_ = nullptr;
  std::string dir_;
  std::string known_hosts_;
  std::string last_spec_;
};


}  // namespace fleetplan

#endif  // FLEETPLAN_TESTS_SSH_TESTBED_TEST_H_
