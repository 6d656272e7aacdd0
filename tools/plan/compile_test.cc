#include "tools/plan/compile.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/docker/docker_settings.h"
#include "plugins/ssh/ssh_groups.h"
#include "tools/plan/node_scripts.h"
#include "tools/plan/test_specs.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Key;
using ::testing::Not;
using ::testing::Pair;

std::map<std::string, std::string> EnvMap(const RankEnv& rank) {
  return {rank.env.begin(), rank.env.end()};
}

const Phase& PhaseOf(const Plan& plan, PhaseKind kind) {
  for (const Phase& phase : plan.phases) {
    if (phase.kind == kind) return phase;
  }
  static const Phase kNone;
  ADD_FAILURE() << "no phase " << PhaseName(kind);
  return kNone;
}

TEST(CompilePlanTest, RanksFollowFileOrderAndMasterIsTheChief) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(TwoByTwoSpec(), {}));
  ASSERT_EQ(plan.ranks.size(), 4u);
  const std::vector<std::pair<std::string, int>> expected = {
      {"worker", 0}, {"worker", 1}, {"head", 0}, {"head", 1}};
  for (int r = 0; r < 4; ++r) {
    const RankEnv& rank = plan.ranks[r];
    std::map<std::string, std::string> env = EnvMap(rank);
    EXPECT_EQ(rank.rank, r);
    EXPECT_EQ(rank.node, expected[r].first);
    EXPECT_EQ(rank.local_rank, expected[r].second);
    EXPECT_EQ(env["RANK"], std::to_string(r));
    EXPECT_EQ(env["LOCAL_RANK"], std::to_string(expected[r].second));
    EXPECT_EQ(env["WORLD_SIZE"], "4");
    EXPECT_EQ(env["LOCAL_WORLD_SIZE"], "2");
    EXPECT_EQ(env["GROUP_RANK"], r < 2 ? "0" : "1");
    // The chief is second in the file, and has a private address.
    EXPECT_EQ(env["MASTER_ADDR"], "10.0.0.5");
    EXPECT_EQ(env["MASTER_PORT"], "29500");
    EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,1");
    EXPECT_EQ(env["OMP_NUM_THREADS"], "1");
    EXPECT_EQ(env["TORCH_NCCL_ASYNC_ERROR_HANDLING"], "1");
    EXPECT_EQ(env["NCCL_DEBUG"], "INFO");
    EXPECT_EQ(env["NCCL_IB_DISABLE"], "1");
    EXPECT_THAT(env, Not(testing::Contains(Key("NCCL_P2P_DISABLE"))));
    // "auto" is resolved on the node at preflight, not exported as text.
    EXPECT_THAT(env, Not(testing::Contains(Key("NCCL_SOCKET_IFNAME"))));
  }
  EXPECT_EQ(plan.ranks[0].address, "104.171.200.182");
  EXPECT_EQ(plan.ranks[2].address, "104.171.200.62");
}

TEST(CompilePlanTest, RankEnvIsSortedByName) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(TwoByTwoSpec(), {}));
  for (const RankEnv& rank : plan.ranks) {
    for (size_t i = 1; i < rank.env.size(); ++i) {
      EXPECT_LT(rank.env[i - 1].first, rank.env[i].first);
    }
  }
}

TEST(CompilePlanTest, SshGroupEnvReachesOnlyThatGroupsNodes) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(TwoByTwoSpec(), {}));
  EXPECT_THAT(EnvMap(plan.ranks[0]),
              Not(testing::Contains(Key("LD_LIBRARY_PATH"))));
  // Kept as written; the node expands it.
  EXPECT_EQ(EnvMap(plan.ranks[3])["LD_LIBRARY_PATH"],
            "$LD_LIBRARY_PATH:/usr/local/cuda/lib64");
}

TEST(CompilePlanTest, MasterAddrFallsBackToTheChiefsAddress) {
  ClusterSpec spec = TwoByTwoSpec();
  spec.nodes[1].private_address.clear();
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec, {}));
  EXPECT_EQ(EnvMap(plan.ranks[0])["MASTER_ADDR"], "104.171.200.62");
}

TEST(CompilePlanTest, NodesWithDifferentRankCounts) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(ThreeNodeSpec(), {}));
  ASSERT_EQ(plan.ranks.size(), 6u);
  const std::vector<std::string> nodes = {"n0", "n1", "n1", "n2", "n2", "n2"};
  const std::vector<int> local = {0, 0, 1, 0, 1, 2};
  for (int r = 0; r < 6; ++r) {
    std::map<std::string, std::string> env = EnvMap(plan.ranks[r]);
    EXPECT_EQ(plan.ranks[r].node, nodes[r]);
    EXPECT_EQ(plan.ranks[r].local_rank, local[r]);
    EXPECT_EQ(env["RANK"], std::to_string(r));
    EXPECT_EQ(env["WORLD_SIZE"], "6");
    EXPECT_EQ(env["MASTER_ADDR"], "10.1.0.1");
    EXPECT_EQ(env["MASTER_PORT"], "23456");
    EXPECT_THAT(env, Not(testing::Contains(Key("CUDA_VISIBLE_DEVICES"))));
  }
  std::map<std::string, std::string> n0 = EnvMap(plan.ranks[0]);
  std::map<std::string, std::string> n2 = EnvMap(plan.ranks[5]);
  EXPECT_EQ(n0["LOCAL_WORLD_SIZE"], "1");
  EXPECT_EQ(n2["LOCAL_WORLD_SIZE"], "3");
  EXPECT_EQ(n2["GROUP_RANK"], "2");
  // One rank per node needs no thread cap; more do.
  EXPECT_THAT(n0, Not(testing::Contains(Key("OMP_NUM_THREADS"))));
  EXPECT_EQ(n2["OMP_NUM_THREADS"], "1");
}

TEST(CompilePlanTest, UserEnvOverridesDefaultsButNotTheContract) {
  ClusterSpec spec = ThreeNodeSpec();
  spec.env = {{"OMP_NUM_THREADS", "4"},
              {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "0"},
              {"NCCL_ASYNC_ERROR_HANDLING", "0"},
              {"RANK", "99"},
              {"LOCAL_RANK", "7"},
              {"WORLD_SIZE", "1"},
              {"MASTER_ADDR", "evil"}};
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec, {}));
  std::map<std::string, std::string> env = EnvMap(plan.ranks[4]);
  EXPECT_EQ(env["OMP_NUM_THREADS"], "4");
  EXPECT_EQ(env["TORCH_NCCL_ASYNC_ERROR_HANDLING"], "0");
  EXPECT_EQ(env["NCCL_ASYNC_ERROR_HANDLING"], "0");
  EXPECT_EQ(env["RANK"], "4");
  EXPECT_EQ(env["LOCAL_RANK"], "1");
  EXPECT_EQ(env["WORLD_SIZE"], "6");
  EXPECT_EQ(env["MASTER_ADDR"], "10.1.0.1");
}

TEST(CompilePlanTest, GroupEnvOverridesGlobalEnv) {
  ClusterSpec spec = TwoByTwoSpec();
  spec.env.emplace_back("LD_LIBRARY_PATH", "/global");
  EditSshGroups(spec).groups[1].env = {{"OMP_NUM_THREADS", "8"}};
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec, {}));
  EXPECT_EQ(EnvMap(plan.ranks[0])["LD_LIBRARY_PATH"], "/global");
  EXPECT_EQ(EnvMap(plan.ranks[0])["OMP_NUM_THREADS"], "8");
  EXPECT_EQ(EnvMap(plan.ranks[2])["LD_LIBRARY_PATH"],
            "$LD_LIBRARY_PATH:/usr/local/cuda/lib64");
  EXPECT_EQ(EnvMap(plan.ranks[2])["OMP_NUM_THREADS"], "1");
}

TEST(CompilePlanTest, NetworkFlags) {
  ClusterSpec spec = TwoByTwoSpec();
  spec.network.nccl_socket_ifname = "^lo,docker0";
  spec.network.ib = true;
  spec.network.p2p = false;
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec, {}));
  std::map<std::string, std::string> env = EnvMap(plan.ranks[1]);
  EXPECT_EQ(env["NCCL_SOCKET_IFNAME"], "^lo,docker0");
  EXPECT_EQ(env["NCCL_P2P_DISABLE"], "1");
  EXPECT_THAT(env, Not(testing::Contains(Key("NCCL_IB_DISABLE"))));
}

TEST(CompilePlanTest, AllSixPhasesInOrder) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(ThreeNodeSpec(), {}));
  std::vector<std::string> names;
  std::vector<size_t> sizes;
  for (const Phase& phase : plan.phases) {
    names.emplace_back(PhaseName(phase.kind));
    sizes.push_back(phase.steps.size());
  }
  EXPECT_THAT(names, ElementsAre("build", "keys", "sync", "environment",
                                 "preflight", "launch"));
  // A path program needs no build; no keys; without [sync] the sync steps
  // send the launch agent alone.
  EXPECT_THAT(sizes, ElementsAre(0, 0, 3, 3, 3, 3));
  const Step& sync = PhaseOf(plan, PhaseKind::kSync).steps[0];
  EXPECT_FALSE(SyncsSource(sync));
  EXPECT_THAT(sync.inputs, ElementsAre(std::make_pair(std::string("files"),
                                                      std::string("the launch agent")),
                                       std::make_pair(std::string("destination"),
                                                      std::string("/home/ubuntu/project"))));
}

TEST(CompilePlanTest, TheKeysPhaseAuthorizesAfterTheChiefsKeyIsMade) {
  ClusterSpec spec = ThreeNodeSpec();
  spec.keys.distribute = true;
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec, {}));
  std::vector<std::string> waves;
  for (const Step& step : PhaseOf(plan, PhaseKind::kKeys).steps) {
    waves.push_back(absl::StrCat(StepKindName(step.kind), " ", step.wave));
  }
  EXPECT_THAT(waves, ElementsAre("ensure-key 0", "authorize-key 1", "authorize-key 1"));
}

TEST(CompilePlanTest, BuildStepForALabel) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(TwoByTwoSpec(), {}));
  const Phase& build = PhaseOf(plan, PhaseKind::kBuild);
  ASSERT_EQ(build.steps.size(), 1u);
  const Step& step = build.steps[0];
  EXPECT_EQ(step.node, kControllerNode);
  EXPECT_EQ(step.kind, StepKind::kBazelBuild);
  EXPECT_EQ(step.command, "bazel build //trainer:train");
  EXPECT_THAT(step.inputs, ElementsAre(Pair("targets", "//trainer:train")));
}

TEST(CompilePlanTest, KeysFromTheChief) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(TwoByTwoSpec(), {}));
  const Phase& keys = PhaseOf(plan, PhaseKind::kKeys);
  ASSERT_EQ(keys.steps.size(), 2u);
  EXPECT_EQ(keys.steps[0].node, "worker");
  EXPECT_EQ(keys.steps[0].kind, StepKind::kAuthorizeKey);
  EXPECT_THAT(keys.steps[0].inputs, ElementsAre(Pair("from", "head")));
  EXPECT_EQ(keys.steps[1].node, "head");
  EXPECT_EQ(keys.steps[1].kind, StepKind::kEnsureKey);
  EXPECT_THAT(keys.steps[1].command, HasSubstr("ssh-keygen"));
  EXPECT_THAT(keys.steps[1].command, HasSubstr("-N ''"));
}

TEST(CompilePlanTest, SyncStepsCarryTheSourceHash) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(TwoByTwoSpec(), {"abc123"}));
  const Phase& sync = PhaseOf(plan, PhaseKind::kSync);
  ASSERT_EQ(sync.steps.size(), 2u);
  EXPECT_EQ(sync.steps[1].kind, StepKind::kSyncTree);
  EXPECT_THAT(sync.steps[1].inputs,
              ElementsAre(Pair("source", "/home/me/fleetplan"),
                          Pair("destination", "/home/ubuntu/project"),
                          Pair("exclude", ".git,bazel-*,*.pt"),
                          Pair("source_hash", "abc123")));
  EXPECT_EQ(plan.source_hash, "abc123");
}

TEST(CompilePlanTest, EnvironmentWritesEnvShUnderTheWorkdir) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(TwoByTwoSpec(), {}));
  const Step& step = PhaseOf(plan, PhaseKind::kEnvironment).steps[1];
  EXPECT_EQ(step.kind, StepKind::kWriteEnv);
  EXPECT_EQ(step.path, "/home/ubuntu/project/.fleetplan/nodes/head/env.sh");
  EXPECT_THAT(step.content, HasSubstr(". /home/ubuntu/venvs/train/bin/activate\n"));
  EXPECT_THAT(step.content, HasSubstr("export MASTER_ADDR=10.0.0.5\n"));
  EXPECT_THAT(step.content,
              HasSubstr("export LD_LIBRARY_PATH=\"${LD_LIBRARY_PATH}\":"
                        "/usr/local/cuda/lib64\n"));
  // The agent sets these per rank.
  EXPECT_THAT(step.content, Not(HasSubstr("export RANK=")));
  EXPECT_THAT(step.content, Not(HasSubstr("LOCAL_RANK=")));
}

TEST(CompilePlanTest, PreflightListsItsChecks) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(TwoByTwoSpec(), {}));
  const Phase& preflight = PhaseOf(plan, PhaseKind::kPreflight);
  ASSERT_EQ(preflight.steps.size(), 2u);
  EXPECT_EQ(preflight.steps[0].kind, StepKind::kCheck);
  EXPECT_THAT(preflight.steps[0].inputs,
              ElementsAre(Pair("workdir", "/home/ubuntu/project"),
                          Pair("connect", "10.0.0.5:29500,29501"),
                          Pair("gpus", "0,1"),
                          Pair("python", "venv /home/ubuntu/venvs/train"),
                          Pair("program", "/home/ubuntu/project/.fleetplan/bin/train"),
                          Pair("nccl_socket_ifname", "auto")));
  EXPECT_FALSE(preflight.steps[0].serves_phase);
  // Only the chief serves the master and supervisor ports, while every
  // node connects to both.
  EXPECT_THAT(preflight.steps[1].inputs,
              testing::IsSupersetOf({Pair("master_port", "29500"),
                                     Pair("supervisor_port", "29501")}));
  EXPECT_TRUE(preflight.steps[1].serves_phase);
  // The agent runs the checks, after the python activation.
  EXPECT_THAT(preflight.steps[1].command,
              HasSubstr("/fleetplan-agent preflight --protocol=2 "
                        "'--request={\"chief_address\":\"10.0.0.5\","));
  EXPECT_THAT(preflight.steps[1].command, HasSubstr("\"listen_for\":2,"));
  EXPECT_THAT(preflight.steps[0].command, HasSubstr("\"listen_for\":0,"));
  EXPECT_THAT(preflight.steps[0].command, HasSubstr("\"connect_timeout_s\":30.0,"));
  EXPECT_LT(preflight.steps[0].command.find(". /home/ubuntu/venvs/train/bin/activate"),
            preflight.steps[0].command.find("--request="));
}

TEST(CompilePlanTest, LaunchCommand) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(TwoByTwoSpec(), {}));
  const Step& step = PhaseOf(plan, PhaseKind::kLaunch).steps[1];
  EXPECT_EQ(step.kind, StepKind::kLaunchAgent);
  EXPECT_EQ(step.command,
            "cd /home/ubuntu/project && "
            ". /home/ubuntu/project/.fleetplan/nodes/head/env.sh && "
            "exec /home/ubuntu/project/.fleetplan/bin/fleetplan-agent launch --protocol=2 "
            "--node=head --first-rank=2 --nproc=2 "
            "--log-dir=/home/ubuntu/project/.fleetplan/nodes/head/logs "
            "--key-file=/home/ubuntu/project/.fleetplan/nodes/head/job.key "
            "--private-dir=/home/ubuntu/project/.fleetplan --detach "
            "--nodes=worker,head --supervisor-port=29501 -- "
            "/home/ubuntu/project/.fleetplan/bin/train "
            "--backend=gloo --dataset=fashion-mnist --epochs=2");
  // The typed request it renders, which apply gives the run's id.
  ASSERT_TRUE(step.launch.has_value());
  EXPECT_EQ(step.launch->node, "head");
  EXPECT_TRUE(step.launch->run_id.empty());
  EXPECT_EQ(LaunchCommandLine(TwoByTwoSpec().nodes[1], *step.launch), step.command);
}

TEST(CompilePlanTest, WorkersConnectToTheChiefsAgent) {
  ClusterSpec spec = TwoByTwoSpec();
  spec.job.supervisor_port = 4000;
  spec.job.heartbeat_timeout = absl::Seconds(5);
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec, {}));
  const Step& worker = PhaseOf(plan, PhaseKind::kLaunch).steps[0];
  EXPECT_THAT(worker.command,
              HasSubstr(" --detach --coordinator=10.0.0.5:4000 --heartbeat-timeout=5s -- "));
  EXPECT_THAT(PhaseOf(plan, PhaseKind::kLaunch).steps[1].command,
              HasSubstr(" --nodes=worker,head --supervisor-port=4000 "));
}

TEST(CompilePlanTest, AHangTimeoutReachesEveryAgent) {
  ClusterSpec spec = TwoByTwoSpec();
  spec.job.hang_timeout = absl::Seconds(90);
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec, {}));
  for (const Step& step : PhaseOf(plan, PhaseKind::kLaunch).steps) {
    EXPECT_THAT(step.command, HasSubstr(" --hang-timeout=1m30s -- "));
  }
  FP_ASSERT_OK_AND_ASSIGN(Plan unset, CompilePlan(TwoByTwoSpec(), {}));
  EXPECT_NE(unset.hash, plan.hash);
  for (const Step& step : PhaseOf(unset, PhaseKind::kLaunch).steps) {
    EXPECT_THAT(step.command, Not(HasSubstr("--hang-timeout")));
  }
}

// n0 (1 rank, the chief), n1 (2), n2 (3) a spare: the first generation
// runs on n0 and n1, as the agents place it; the chief carries the policy,
// the workers rejoin.
TEST(CompilePlanTest, AnElasticJobsPolicyAndSpare) {
  ClusterSpec spec = ThreeNodeSpec();
  spec.nodes[2].spare = true;
  spec.job.min_nodes = 1;
  spec.job.max_node_losses = 4;
  spec.job.rejoin = "next-failure";
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec, {}));
  ASSERT_EQ(plan.ranks.size(), 3u);
  std::map<std::string, std::string> last = EnvMap(plan.ranks[2]);
  EXPECT_EQ(last["RANK"], "2");
  EXPECT_EQ(last["WORLD_SIZE"], "3");
  EXPECT_EQ(last["GROUP_RANK"], "1");
  EXPECT_EQ(last["GROUP_WORLD_SIZE"], "2");
  std::optional<GenerationPlace> agents = PlaceAmong({{"n0", 1}, {"n1", 2}}, "n1");
  ASSERT_TRUE(agents.has_value());
  EXPECT_EQ(last["WORLD_SIZE"], absl::StrCat(agents->place.world_size));
  EXPECT_EQ(plan.ranks[1].rank, agents->first_rank);
  const Phase& launch = PhaseOf(plan, PhaseKind::kLaunch);
  EXPECT_THAT(launch.steps[0].command,
              HasSubstr(" --min-nodes=1 --max-node-losses=4 --rejoin=next-failure --spares=n2 -- "));
  EXPECT_THAT(launch.steps[0].inputs,
              testing::Contains(Pair("elastic", "min_nodes=1, max_node_losses=4, "
                                                "rejoin=next-failure, spares=n2")));
  for (int i : {1, 2}) EXPECT_THAT(launch.steps[i].command, HasSubstr(" --elastic -- "));
  EXPECT_THAT(launch.steps[2].inputs, testing::Contains(Pair("spare", "true")));

  // Without the keys, nothing of it, and the same plan as ever.
  FP_ASSERT_OK_AND_ASSIGN(Plan plain, CompilePlan(ThreeNodeSpec(), {}));
  EXPECT_EQ(plain.ranks.size(), 6u);
  for (const Step& step : PhaseOf(plain, PhaseKind::kLaunch).steps) {
    EXPECT_THAT(step.command, Not(HasSubstr("--elastic")));
    EXPECT_THAT(step.command, Not(HasSubstr("--min-nodes")));
    EXPECT_THAT(step.inputs, IsEmpty());
  }
  // min_nodes at every node, no spare: a job that needs every node.
  ClusterSpec all = ThreeNodeSpec();
  all.job.min_nodes = 3;
  FP_ASSERT_OK_AND_ASSIGN(Plan needs_all, CompilePlan(all, {}));
  EXPECT_THAT(PhaseOf(needs_all, PhaseKind::kLaunch).steps[1].command,
              Not(HasSubstr("--elastic")));
  EXPECT_NE(needs_all.spec_hash, plain.spec_hash);
}

TEST(CompilePlanTest, AProgressPatternReachesEveryAgentQuoted) {
  ClusterSpec spec = TwoByTwoSpec();
  spec.job.progress = "step (\\d+) of '";
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec, {}));
  for (const Step& step : PhaseOf(plan, PhaseKind::kLaunch).steps) {
    EXPECT_THAT(step.command, HasSubstr(" '--progress=step (\\d+) of '\\''' -- "));
  }
  FP_ASSERT_OK_AND_ASSIGN(Plan unset, CompilePlan(TwoByTwoSpec(), {}));
  EXPECT_NE(unset.hash, plan.hash);
  for (const Step& step : PhaseOf(unset, PhaseKind::kLaunch).steps) {
    EXPECT_THAT(step.command, Not(HasSubstr("--progress")));
  }
}

TEST(CompilePlanTest, TheSupervisorPortMustDifferFromTheMasterPort) {
  ClusterSpec spec = TwoByTwoSpec();
  spec.job.supervisor_port = spec.network.master_port;
  EXPECT_THAT(CompilePlan(spec, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "the supervisor port (29500) must be a port other than master_port"));
  spec.job.supervisor_port.reset();
  spec.network.master_port = 65535;
  EXPECT_THAT(CompilePlan(spec, {}), StatusIs(absl::StatusCode::kInvalidArgument,
                                              "the supervisor port (65536)"));
}

TEST(CompilePlanTest, ProgramPaths) {
  ClusterSpec spec = ThreeNodeSpec();
  auto program_of = [&](const std::string& program) -> std::string {
    spec.job.program = program;
    auto plan = CompilePlan(spec, {});
    EXPECT_THAT(plan, IsOk());
    if (!plan.ok()) return "";
    const std::string& command = PhaseOf(*plan, PhaseKind::kLaunch).steps[0].command;
    return command.substr(command.find(" -- ") + 4);
  };
  EXPECT_EQ(program_of("bin/train.sh"), "/home/ubuntu/project/bin/train.sh");
  EXPECT_EQ(program_of("./train"), "/home/ubuntu/project/train");
  // A bare name is found on the ranks' PATH, as a shell does.
  EXPECT_EQ(program_of("python3"), "python3");
  EXPECT_EQ(program_of("train.sh"), "train.sh");
  EXPECT_EQ(program_of("/opt/train"), "/opt/train");
  EXPECT_EQ(program_of("//trainer"), "/home/ubuntu/project/.fleetplan/bin/trainer");
  EXPECT_EQ(program_of("//a/b"), "/home/ubuntu/project/.fleetplan/bin/b");
  EXPECT_EQ(program_of("/opt/my train"), "'/opt/my train'");
}

TEST(CompilePlanTest, StepsAndPlanAreHashed) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(TwoByTwoSpec(), {}));
  for (const Phase& phase : plan.phases) {
    for (const Step& step : phase.steps) EXPECT_EQ(step.hash.size(), 32u);
  }
  EXPECT_EQ(plan.hash.size(), 32u);
  EXPECT_EQ(plan.spec_hash.size(), 32u);
  // Same work on different nodes hashes differently.
  const Phase& launch = PhaseOf(plan, PhaseKind::kLaunch);
  EXPECT_NE(launch.steps[0].hash, launch.steps[1].hash);
}

TEST(CompilePlanTest, Deterministic) {
  FP_ASSERT_OK_AND_ASSIGN(Plan a, CompilePlan(TwoByTwoSpec(), {"s"}));
  FP_ASSERT_OK_AND_ASSIGN(Plan b, CompilePlan(TwoByTwoSpec(), {"s"}));
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_EQ(a.spec_hash, b.spec_hash);
}

// Every field of the resolved spec must reach the spec hash and the plan
// hash, or a changed spec would pass for the saved plan.
TEST(CompilePlanTest, EveryFieldChangesTheHashes) {
  using Mutation = std::function<void(ClusterSpec&)>;
  const std::vector<std::pair<std::string, Mutation>> mutations = {
      {"name", [](ClusterSpec& s) { s.name = "other"; }},
      {"spec_path", [](ClusterSpec& s) { s.spec_path = "/x.toml"; }},
      {"node.name", [](ClusterSpec& s) { s.nodes[0].name = "w2"; }},
      {"node.address", [](ClusterSpec& s) { s.nodes[0].address = "1.2.3.4"; }},
      {"node.private_address", [](ClusterSpec& s) { s.nodes[0].private_address = "10.9.9.9"; }},
      {"node.transport", [](ClusterSpec& s) { s.nodes[0].transport = "docker"; }},
      {"node.workdir", [](ClusterSpec& s) { s.nodes[0].workdir = "/srv"; }},
      {"node.ssh_group", [](ClusterSpec& s) { s.nodes[0].groups["ssh"] = "lambda"; }},
      {"python.kind", [](ClusterSpec& s) { s.nodes[0].python.kind = PythonEnv::Kind::kNone; }},
      {"python.venv", [](ClusterSpec& s) { s.nodes[0].python.venv = "/v"; }},
      {"python.conda", [](ClusterSpec& s) { s.nodes[0].python.conda = "c"; }},
      {"python.conda_sh", [](ClusterSpec& s) { s.nodes[0].python.conda_sh = "/c.sh"; }},
      {"node.gpus", [](ClusterSpec& s) { s.nodes[0].gpus = {0}; }},
      {"node.cpus", [](ClusterSpec& s) { s.nodes[0].cpus = {3}; }},
      {"node.chief", [](ClusterSpec& s) { s.nodes[1].chief = false; }},
      {"node.nproc", [](ClusterSpec& s) { s.nodes[0].nproc = 3; }},
      {"node.index", [](ClusterSpec& s) { s.nodes[0].index = 5; }},
      {"ssh.name", [](ClusterSpec& s) { EditSshGroups(s).groups.emplace_back().name = "spare"; }},
      {"ssh.user", [](ClusterSpec& s) { EditSshGroups(s).groups[0].user = "root"; }},
      {"ssh.port", [](ClusterSpec& s) { EditSshGroups(s).groups[0].port = 2222; }},
      {"ssh.key_file", [](ClusterSpec& s) { EditSshGroups(s).groups[0].key_file = "~/k"; }},
      {"ssh.known_hosts", [](ClusterSpec& s) { EditSshGroups(s).groups[0].known_hosts = "~/kh"; }},
      {"ssh.env", [](ClusterSpec& s) { EditSshGroups(s).groups[0].env[0].second = "/lib"; }},
      {"keys", [](ClusterSpec& s) { s.keys.distribute = false; }},
      {"sync.enabled", [](ClusterSpec& s) { s.sync.enabled = false; }},
      {"sync.source", [](ClusterSpec& s) { s.sync.source = "/other"; }},
      {"sync.exclude", [](ClusterSpec& s) { s.sync.exclude.pop_back(); }},
      {"env", [](ClusterSpec& s) { s.env[0].second = "WARN"; }},
      {"ifname", [](ClusterSpec& s) { s.network.nccl_socket_ifname = "ens3"; }},
      {"ib", [](ClusterSpec& s) { s.network.ib.reset(); }},
      {"p2p", [](ClusterSpec& s) { s.network.p2p.reset(); }},
      {"master_port", [](ClusterSpec& s) { s.network.master_port = 1234; }},
      {"program", [](ClusterSpec& s) { s.job.program = "//trainer:other"; }},
      {"args", [](ClusterSpec& s) { s.job.args.push_back("--x"); }},
      {"nproc_per_node", [](ClusterSpec& s) { s.job.nproc_per_node = 2; }},
      {"restarts", [](ClusterSpec& s) { s.job.restarts = 3; }},
      {"docker.image", [](ClusterSpec& s) { EditDockerSettings(s).image = "img"; }},
      {"docker.network", [](ClusterSpec& s) { EditDockerSettings(s).network = "net"; }},
      {"docker.create", [](ClusterSpec& s) { EditDockerSettings(s).create = true; }},
  };
  FP_ASSERT_OK_AND_ASSIGN(Plan base, CompilePlan(TwoByTwoSpec(), {}));
  for (const auto& [field, mutate] : mutations) {
    ClusterSpec spec = TwoByTwoSpec();
    mutate(spec);
    auto plan = CompilePlan(spec, {});
    ASSERT_THAT(plan, IsOk()) << field;
    EXPECT_NE(plan->spec_hash, base.spec_hash) << field;
    EXPECT_NE(plan->hash, base.hash) << field;
  }
}

TEST(CompilePlanTest, SourceHashChangesThePlanButNotTheSpecHash) {
  FP_ASSERT_OK_AND_ASSIGN(Plan a, CompilePlan(TwoByTwoSpec(), {"one"}));
  FP_ASSERT_OK_AND_ASSIGN(Plan b, CompilePlan(TwoByTwoSpec(), {"two"}));
  EXPECT_EQ(a.spec_hash, b.spec_hash);
  EXPECT_NE(a.hash, b.hash);
  EXPECT_NE(PhaseOf(a, PhaseKind::kSync).steps[0].hash,
            PhaseOf(b, PhaseKind::kSync).steps[0].hash);
  // Steps that do not depend on the sources keep their hash.
  EXPECT_EQ(PhaseOf(a, PhaseKind::kLaunch).steps[0].hash,
            PhaseOf(b, PhaseKind::kLaunch).steps[0].hash);
}

TEST(CompilePlanTest, RejectsSpecsNoPlanCanRun) {
  const std::vector<std::pair<std::string, std::function<void(ClusterSpec&)>>>
      cases = {
          {"no nodes", [](ClusterSpec& s) { s.nodes.clear(); }},
          {"two nodes are named 'head'", [](ClusterSpec& s) { s.nodes[0].name = "head"; }},
          {"needs at least 1", [](ClusterSpec& s) { s.nodes[0].nproc = 0; }},
          {"is not absolute", [](ClusterSpec& s) { s.nodes[0].workdir = "project"; }},
          {"2 nodes are marked chief", [](ClusterSpec& s) { s.nodes[0].chief = true; }},
          {"ssh group 'nope'", [](ClusterSpec& s) { s.nodes[0].groups["ssh"] = "nope"; }},
          {"job.program is empty", [](ClusterSpec& s) { s.job.program.clear(); }},
      };
  for (const auto& [message, mutate] : cases) {
    ClusterSpec spec = TwoByTwoSpec();
    mutate(spec);
    EXPECT_THAT(CompilePlan(spec, {}),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(message)));
  }
}

}  // namespace
}  // namespace fleetplan
