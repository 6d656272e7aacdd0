// `top` end to end over ssh: two sshd nodes of the test bed, two ranks
// each of tests/testdata/top_rank.sh (local rank 0 burns a core, local
// rank 1 sleeps between its lines), steps read with [job] progress. Node
// 0 has no nvidia-smi; node 1's ranks find a stand-in on their PATH that
// fails, as nvidia-smi does without its driver.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/apply_harness.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kNodes = 2;
constexpr char kWorkdir[] = "/work/top";
constexpr char kFakeGpu[] = "/opt/fakegpu";

class SshTopTest : public SshTestbedTest {
 protected:
  static void SetUpTestSuite() { StartNodes(kNodes, "fp-top"); }
  static void TearDownTestSuite() { StopNodes(); }

  void SetUp() override {
    ASSERT_TRUE(ready()) << "the test bed did not start";
    nodes_ = &Nodes();
    dir_ = MakeTempDir();
    absl::StatusOr<std::string> keys = HostKeys();
    ASSERT_THAT(keys, IsOk());
    ASSERT_THAT(WriteFileAtomic(dir_ + "/known_hosts", *keys, 0600), IsOk());
    ASSERT_THAT(CopyFileAtomic(Runfile("tests/testdata/top_rank.sh"), dir_ + "/src/top_rank.sh",
                               0755),
                IsOk());
  }

  void TearDown() override {
    if (!spec_.empty()) Tool({"stop", spec_});
  }

  // The spec: node 1's ranks have kFakeGpu first on their PATH.
  std::string WriteSpec() {
    std::string text = absl::StrCat("name = \"top\"\n[defaults]\ntransport = \"ssh\"\nworkdir = \"",
                                    kWorkdir, "\"\nssh = \"bed\"\n");
    for (int i = 0; i < kNodes; ++i) {
      const TestbedNode& node = (*nodes_)[i];
      absl::StrAppend(&text, "[[nodes]]\nname = \"", node.name, "\"\naddress = \"", node.ip, "\"\n",
                      i == 0 ? "chief = true\n" : "ssh = \"gpu\"\n");
    }
    for (const char* group : {"bed", "gpu"}) {
      absl::StrAppend(&text, "[ssh.", group, "]\nuser = \"root\"\nkey_file = ",
                      TomlString((*nodes_)[0].key_file),
                      "\nknown_hosts = ", TomlString(dir_ + "/known_hosts"), "\n");
    }
    absl::StrAppend(&text, "env = { PATH = \"", kFakeGpu,
                    ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\" }\n",
                    "[sync]\nsource = \"src\"\n[job]\nprogram = \"./top_rank.sh\"\n",
                    "nproc_per_node = 2\nprogress = \"step (\\\\d+)\"\n");
    spec_ = dir_ + "/cluster.toml";
    EXPECT_THAT(WriteFileAtomic(spec_, text, 0644), IsOk());
    return spec_;
  }

  ToolResult Tool(std::vector<std::string> args, absl::Duration timeout = absl::Seconds(60)) {
    args[0] = "tools/fleetplan-" + args[0];
    return RunTool(args, timeout, {{"XDG_RUNTIME_DIR", dir_}});
  }

  // `top --once --json`, parsed; null when it failed.
  nlohmann::json TopJson() {
    ToolResult top = Tool({"top", "--once", "--json", spec_});
    EXPECT_EQ(top.status, 0) << top.output;
    nlohmann::json json = nlohmann::json::parse(top.output, nullptr, false);
    EXPECT_TRUE(json.is_object()) << top.output;
    return json.is_object() ? json : nlohmann::json();
  }

  // An nvidia-smi on node `i` at kFakeGpu that fails as one without its
  // driver does.
  void PlantFailingNvidiaSmi(int i) {
    const std::string fake = absl::StrCat(kFakeGpu, "/nvidia-smi");
    ASSERT_THAT(ContainerExec((*nodes_)[i].name,
                              absl::StrCat("mkdir -p ", kFakeGpu, " && printf '%s\\n' '#!/bin/sh' ",
                                           "'echo \"NVIDIA-SMI has failed because it could not "
                                           "communicate with the NVIDIA driver.\"' 'exit 9' > ",
                                           fake, " && chmod 755 ", fake)),
                IsOk());
  }

  // `top --once --json` once the busy ranks have reported a step (the
  // sleeping ones do at once).
  nlohmann::json TopOnceEveryRankStepped() {
    nlohmann::json top;
    absl::Time deadline = absl::Now() + absl::Seconds(30);
    do {
      top = TopJson();
    } while ((RankOf(top, 0, 0).value("step", nlohmann::json()).is_null() ||
              RankOf(top, 1, 0).value("step", nlohmann::json()).is_null()) &&
             absl::Now() < deadline);
    return top;
  }

  // Node `i`'s figures in `second`, a call 2 s after `first`.
  void ExpectNodeFigures(const nlohmann::json& first, const nlohmann::json& second, int i) {
    const nlohmann::json& node = second["nodes"][i];
    EXPECT_EQ(node["name"], (*nodes_)[i].name);
    EXPECT_TRUE(node["cpu_percent"].is_number()) << node.dump();
    EXPECT_GT(node.value("memory_bytes", 0ull), 0u) << node.dump();
    ASSERT_EQ(node["ranks"].size(), 2u) << node.dump();
    const nlohmann::json& busy = RankOf(second, i, 0);
    const nlohmann::json& idle = RankOf(second, i, 1);
    EXPECT_EQ(busy["state"], "running") << node.dump();
    EXPECT_EQ(busy["rank"], i * 2) << node.dump();
    EXPECT_GT(busy.value("pid", 0), 0) << node.dump();
    EXPECT_GT(busy.value("rss_bytes", 0ull), 0u) << node.dump();
    // Over the 2 s since the first call's sample. A busy loop gets what the
    // other processes of this shared 2-core machine leave it (8 % of a core
    // at a load of 10), a sleeping rank next to nothing.
    double busy_cpu = busy.value("cpu_percent", -1.0);
    double idle_cpu = idle.value("cpu_percent", 100.0);
    EXPECT_GE(busy_cpu, 4.0) << node.dump();
    EXPECT_LE(idle_cpu, 2.0) << node.dump();
    EXPECT_GT(busy_cpu, 10 * idle_cpu) << node.dump();
    EXPECT_LT(idle.value("last_output_age_s", 100.0), 10.0) << node.dump();
    for (int local : {0, 1}) {
      EXPECT_GT(RankOf(second, i, local).value("step", -1),
                RankOf(first, i, local).value("step", 0))
          << "rank " << local << " of " << node["name"] << ": " << first.dump() << "\n"
          << second.dump();
    }
    EXPECT_GT(idle.value("steps_per_s", 0.0), 0.5) << node.dump();
  }

  static const nlohmann::json& RankOf(const nlohmann::json& top, int node, int local_rank) {
    static const nlohmann::json kNone;
    if (!top.is_object()) return kNone;
    for (const nlohmann::json& rank : top["nodes"][node]["ranks"]) {
      if (rank.value("local_rank", -1) == local_rank) return rank;
    }
    return kNone;
  }

  const std::vector<TestbedNode>* nodes_ = nullptr;
  std::string dir_;
  std::string spec_;
};

TEST_F(SshTopTest, EveryNodesAndRanksFiguresThroughTheTransports) {
  ASSERT_NO_FATAL_FAILURE(PlantFailingNvidiaSmi(1));
  // Otherwise "no GPUs" on node 0 would prove nothing.
  ASSERT_THAT(ContainerExec((*nodes_)[0].name, "command -v nvidia-smi || ls /opt/fakegpu"),
              Not(IsOk()));
  ToolResult apply = Tool({"apply", "--detach", WriteSpec()}, absl::Seconds(120));
  ASSERT_EQ(apply.status, 0) << apply.output;
  nlohmann::json first = TopOnceEveryRankStepped();
  absl::SleepFor(absl::Seconds(2));
  nlohmann::json second = TopJson();
  ASSERT_TRUE(second.is_object());
  EXPECT_EQ(second["state"], "running") << second.dump();
  EXPECT_FALSE(second["run_id"].get<std::string>().empty());
  ASSERT_EQ(second["nodes"].size(), 2u) << second.dump();
  for (int i = 0; i < kNodes; ++i) ExpectNodeFigures(first, second, i);
  // No nvidia-smi: no GPUs. One that fails: unknown (null), never 0 %.
  EXPECT_EQ(second["nodes"][0]["gpus"], nlohmann::json::array()) << second.dump();
  EXPECT_TRUE(second["nodes"][1]["gpus"].is_null()) << second.dump();
  // For people: the same, in human units.
  ToolResult human = Tool({"top", "--once", spec_});
  EXPECT_EQ(human.status, 0) << human.output;
  EXPECT_THAT(human.output, HasSubstr(absl::StrCat("\n", (*nodes_)[0].name)));
  EXPECT_THAT(human.output, HasSubstr("none\n"));
  EXPECT_THAT(human.output, Not(HasSubstr("\x1b[")));
  EXPECT_EQ(Tool({"stop", spec_}).status, 0);
  spec_.clear();
}

}  // namespace
}  // namespace fleetplan
