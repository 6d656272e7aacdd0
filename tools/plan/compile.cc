#include "tools/plan/compile.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/plan/node_scripts.h"
#include "tools/plan/preflight_script.h"
#include "tools/plan/rank_env.h"
#include "tools/plan/spec_digest.h"
#include "tools/protocol/job_state.h"
#include "tools/protocol/node_layout.h"
#include "tools/util/digest.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

absl::Status CheckNode(const ClusterSpec& spec, const NodeSpec& node) {
  if (node.nproc < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", node.name, "' runs ", node.nproc, " ranks; it needs at least 1"));
  }
  if (!absl::StartsWith(node.workdir, "/")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", node.name, "': workdir '", node.workdir, "' is not absolute"));
  }
  for (const auto& [table, group] : node.groups) {
    if (!spec.DefinesGroup(table, group)) {
      return absl::InvalidArgumentError(absl::StrCat("node '", node.name, "' names ", table,
                                                     " group '", group,
                                                     "', which the spec does not define"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSpec(const ClusterSpec& spec) {
  if (spec.nodes.empty()) {
    return absl::InvalidArgumentError("the spec lists no nodes");
  }
  if (spec.job.program.empty()) {
    return absl::InvalidArgumentError("job.program is empty");
  }
  absl::flat_hash_set<absl::string_view> names;
  int chiefs = 0;
  for (const NodeSpec& node : spec.nodes) {
    if (!names.insert(node.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("two nodes are named '", node.name, "'"));
    }
    if (node.chief) ++chiefs;
    FP_RETURN_IF_ERROR(CheckNode(spec, node));
  }
  if (chiefs > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(chiefs, " nodes are marked chief; mark exactly one"));
  }
  int supervisor_port = spec.SupervisorPort();
  if (supervisor_port == spec.network.master_port || supervisor_port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the supervisor port (", supervisor_port, ") must be a port other than master_port (",
        spec.network.master_port, "); set [job] supervisor_port"));
  }
  return absl::OkStatus();
}

std::string StepHash(const Step& step, const std::string& preamble) {
  Digester digester;
  if (!preamble.empty()) digester.Add(preamble);
  digester.Add(PhaseName(step.phase)).Add(step.node).Add(StepKindName(step.kind));
  digester.Add(absl::StrCat(step.inputs.size()));
  for (const auto& [key, value] : step.inputs) digester.Add(key).Add(value);
  digester.Add(step.command).Add(step.path).Add(step.content);
  if (step.serves_phase) digester.Add("serves_phase");
  return digester.Hex();
}

// Builds the steps of one phase; each Add finishes its step with its hash.
class PhaseBuilder {
 public:
  PhaseBuilder(PhaseKind kind, size_t expected_steps, std::string preamble = "") {
    phase_.kind = kind;
    phase_.preamble = std::move(preamble);
    phase_.steps.reserve(expected_steps);
  }

  Step& Add(absl::string_view node, StepKind kind) {
    Finish();
    Step& step = phase_.steps.emplace_back();
    step.phase = phase_.kind;
    step.node = std::string(node);
    step.kind = kind;
    return step;
  }

  Phase Build() && {
    Finish();
    return std::move(phase_);
  }

 private:
  void Finish() {
    if (!phase_.steps.empty()) {
      phase_.steps.back().hash = StepHash(phase_.steps.back(), phase_.preamble);
    }
  }

  Phase phase_;
};

Phase BuildPhase(const ClusterSpec& spec) {
  PhaseBuilder phase(PhaseKind::kBuild, 1);
  if (spec.job.program_is_label()) {
    Step& step = phase.Add(kControllerNode, StepKind::kBazelBuild);
    step.inputs = {{"targets", spec.job.program}};
    step.command = BazelBuildCommand(spec.job.program);
  }
  return std::move(phase).Build();
}

Phase KeysPhase(const ClusterSpec& spec) {
  PhaseBuilder phase(PhaseKind::kKeys, spec.nodes.size());
  if (!spec.keys.distribute) return std::move(phase).Build();
  const NodeSpec& chief = spec.chief();
  for (const NodeSpec& node : spec.nodes) {
    if (&node == &chief) {
      phase.Add(node.name, StepKind::kEnsureKey).command = EnsureKeyCommand();
    } else {
      // The executor fills in the chief's public key at run time.
      Step& authorize = phase.Add(node.name, StepKind::kAuthorizeKey);
      authorize.inputs = {{"from", chief.name}};
      authorize.wave = 1;
    }
  }
  return std::move(phase).Build();
}

Phase SyncPhase(const ClusterSpec& spec, const CompileInputs& inputs) {
  PhaseBuilder phase(PhaseKind::kSync, spec.nodes.size());
  if (!spec.sync.enabled) {
    // Without [sync] the launch agent (and a program apply builds) must
    // still reach every node's workdir.
    std::string files = "the launch agent";
    if (spec.job.program_is_label()) absl::StrAppend(&files, " and ", spec.job.program);
    for (const NodeSpec& node : spec.nodes) {
      phase.Add(node.name, StepKind::kSyncTree).inputs = {{"files", files},
                                                          {"destination", node.workdir}};
    }
    return std::move(phase).Build();
  }
  std::string exclude = absl::StrJoin(spec.sync.exclude, ",");
  for (const NodeSpec& node : spec.nodes) {
    phase.Add(node.name, StepKind::kSyncTree).inputs = {
        {"source", spec.sync.source},
        {"destination", node.workdir},
        {"exclude", exclude},
        {"source_hash", inputs.source_hash}};
  }
  return std::move(phase).Build();
}

bool NcclAuto(const ClusterSpec& spec) {
  return spec.network.nccl_socket_ifname == "auto";
}

// "A (env VAR), B (file ~/f), C (command `pass show c`)": what the plan
// shows of the secrets; apply reads the values.
std::string SecretSources(const std::vector<SecretSpec>& secrets) {
  std::vector<std::string> parts;
  for (const SecretSpec& secret : secrets) {
    absl::string_view source = SecretSourceName(secret.source);
    parts.push_back(secret.source == SecretSpec::Source::kCommand
                        ? absl::StrCat(secret.name, " (", source, " `", secret.from, "`)")
                        : absl::StrCat(secret.name, " (", source, " ", secret.from, ")"));
  }
  return absl::StrJoin(parts, ", ");
}

Phase EnvironmentPhase(const ClusterSpec& spec,
                       const std::vector<std::vector<NodeVar>>& node_envs) {
  PhaseBuilder phase(PhaseKind::kEnvironment, spec.nodes.size());
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    const NodeSpec& node = spec.nodes[i];
    Step& step = phase.Add(node.name, StepKind::kWriteEnv);
    step.path = EnvScriptPath(node);
    step.content = EnvScript(node, node_envs[i], NcclAuto(spec), spec.secrets);
    if (!spec.secrets.empty()) step.inputs.emplace_back("secrets", SecretSources(spec.secrets));
  }
  return std::move(phase).Build();
}

std::string PythonDescription(const PythonEnv& python) {
  switch (python.kind) {
    case PythonEnv::Kind::kVenv:
      return absl::StrCat("venv ", python.venv);
    case PythonEnv::Kind::kConda:
      return absl::StrCat("conda ", python.conda, " via ", python.conda_sh);
    case PythonEnv::Kind::kNone:
      break;
  }
  return "";
}

// Every node's script names the chief's address, the ports and the node
// count, so a change to any of them reruns every node's preflight, which
// must run together anyway: the chief listens until all have connected.
Phase PreflightPhase(const ClusterSpec& spec,
                     const std::vector<std::vector<NodeVar>>& node_envs,
                     const CompileInputs& compile_inputs, PreflightMode mode) {
  PhaseBuilder phase(PhaseKind::kPreflight, spec.nodes.size(), PreflightLibrary());
  PreflightInputs inputs;
  inputs.mode = mode;
  inputs.chief = &spec.chief();
  inputs.master_port = spec.network.master_port;
  inputs.supervisor_port = spec.SupervisorPort();
  inputs.nodes = static_cast<int>(spec.nodes.size());
  inputs.nccl_auto = NcclAuto(spec);
  inputs.job = &spec.job;
  // Rounded up to a MiB: the room asked for barely moves, and an edit that
  // changes the sources' size by a few bytes leaves the step's hash alone
  // (the edit loop relaunches without rerunning the checks).
  constexpr uint64_t kMiB = 1 << 20;
  inputs.sync_bytes = (compile_inputs.source_bytes + kMiB - 1) / kMiB * kMiB;
  std::string connect = absl::StrCat(ReachAddress(*inputs.chief), ":", inputs.master_port, ",",
                                     inputs.supervisor_port);
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    const NodeSpec& node = spec.nodes[i];
    Step& step = phase.Add(node.name, StepKind::kCheck);
    step.inputs.emplace_back("workdir", node.workdir);
    if (&node == inputs.chief) {
      step.inputs.emplace_back("master_port", absl::StrCat(spec.network.master_port));
      step.inputs.emplace_back("supervisor_port", absl::StrCat(inputs.supervisor_port));
      // Its listener serves the other nodes' connect checks.
      step.serves_phase = true;
    }
    step.inputs.emplace_back("connect", connect);
    if (!node.gpus.empty()) {
      step.inputs.emplace_back("gpus", absl::StrJoin(node.gpus, ","));
    }
    if (node.python.kind != PythonEnv::Kind::kNone) {
      step.inputs.emplace_back("python", PythonDescription(node.python));
    }
    step.inputs.emplace_back("program", ProgramPath(spec.job, node));
    if (inputs.nccl_auto) {
      step.inputs.emplace_back("nccl_socket_ifname", "auto");
    }
    step.command = PreflightScript(node, node_envs[i], inputs);
  }
  return std::move(phase).Build();
}

// What the coordinator is told of an elastic job; nothing for one that
// needs every node (its launch commands stay as they were).
ElasticPolicy ElasticPolicyOf(const ClusterSpec& spec) {
  ElasticPolicy policy;
  if (!spec.Elastic()) return policy;
  int regular = 0;
  for (const NodeSpec& node : spec.nodes) {
    if (node.spare) {
      policy.spares.push_back(node.name);
    } else {
      ++regular;
    }
  }
  if (spec.job.min_nodes.value_or(regular) < regular) policy.min_nodes = *spec.job.min_nodes;
  policy.max_node_losses = spec.job.max_node_losses.value_or(-1);
  policy.rejoin = spec.job.rejoin;
  return policy;
}

// "min_nodes=3, max_node_losses=any, rejoin=restart, spares=d".
std::string DescribeElastic(const ElasticPolicy& policy, const ClusterSpec& spec) {
  int regular = static_cast<int>(spec.nodes.size() - policy.spares.size());
  return absl::StrCat(
      "min_nodes=", policy.min_nodes > 0 ? policy.min_nodes : regular, ", max_node_losses=",
      policy.max_node_losses >= 0 ? absl::StrCat(policy.max_node_losses) : "any",
      ", rejoin=", policy.rejoin, ", spares=",
      policy.spares.empty() ? "none" : absl::StrJoin(policy.spares, ","));
}

Phase LaunchPhase(const ClusterSpec& spec, const std::vector<int>& first_ranks) {
  PhaseBuilder phase(PhaseKind::kLaunch, spec.nodes.size());
  const NodeSpec& chief = spec.chief();
  Supervision coordinator;
  for (const NodeSpec& node : spec.nodes) coordinator.nodes.push_back(node.name);
  coordinator.supervisor_port = spec.SupervisorPort();
  coordinator.heartbeat_timeout = spec.job.heartbeat_timeout;
  coordinator.elastic = ElasticPolicyOf(spec);
  Supervision worker;
  worker.coordinator = absl::StrCat(ReachAddress(chief), ":",
                                    spec.SupervisorPort());
  worker.heartbeat_timeout = spec.job.heartbeat_timeout;
  worker.rejoins = spec.Elastic();
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    const NodeSpec& node = spec.nodes[i];
    Step& step = phase.Add(node.name, StepKind::kLaunchAgent);
    step.launch =
        LaunchRequest(spec.job, node, first_ranks[i], &node == &chief ? coordinator : worker);
    // What the plan shows and hashes: the launch without a run's id.
    step.command = LaunchCommandLine(node, *step.launch);
    // Shown by the plan; inputs only of an elastic job's steps.
    if (node.spare) step.inputs.emplace_back("spare", "true");
    if (&node == &chief && spec.Elastic()) {
      step.inputs.emplace_back("elastic", DescribeElastic(coordinator.elastic, spec));
    }
  }
  return std::move(phase).Build();
}

std::string PlanHash(const Plan& plan) {
  Digester digester;
  digester.Add(plan.spec_name).Add(plan.spec_path).Add(plan.spec_hash).Add(
      plan.source_hash);
  for (const Phase& phase : plan.phases) {
    digester.Add(PhaseName(phase.kind)).Add(phase.preamble).Add(absl::StrCat(phase.steps.size()));
    for (const Step& step : phase.steps) digester.Add(step.hash);
  }
  for (const RankEnv& rank : plan.ranks) {
    digester.Add(absl::StrCat(rank.rank, "/", rank.local_rank))
        .Add(rank.node)
        .Add(rank.address)
        .Add(absl::StrCat(rank.env.size()));
    for (const auto& [name, value] : rank.env) digester.Add(name).Add(value);
    digester.Add(absl::StrCat(rank.argv.size()));
    for (const std::string& arg : rank.argv) digester.Add(arg);
  }
  return digester.Hex();
}

// CompilePlan, or with `check_only` the plan of `plan --check`.
absl::StatusOr<Plan> Compile(const ClusterSpec& spec, const CompileInputs& inputs,
                             bool check_only) {
  FP_RETURN_IF_ERROR(CheckSpec(spec));
  std::vector<GenerationPlace> places = PlannedPlaces(spec);
  std::vector<int> first_ranks;
  first_ranks.reserve(places.size());
  for (const GenerationPlace& place : places) first_ranks.push_back(place.first_rank);

  Plan plan;
  plan.spec_name = spec.name;
  plan.spec_path = spec.spec_path;
  plan.spec_hash = SpecDigest(spec);
  plan.source_hash = inputs.source_hash;
  std::vector<std::vector<NodeVar>> node_envs;
  node_envs.reserve(spec.nodes.size());
  // The chief is never a spare: its world size is the first generation's.
  plan.ranks.reserve(places.empty() ? 0 : places.front().place.world_size);
  // As at the first generation; the run id is chosen at launch.
  Generation generation{std::string(kPlannedRunId), 0, spec.job.restarts, ""};
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    const NodeSpec& node = spec.nodes[i];
    generation.run_dir = RunDir(NodeLogDir(node), kPlannedRunId);
    node_envs.push_back(NodeEnvironment(spec, i, places[i].place));
    if (node.spare) continue;
    std::vector<std::string> program = {ProgramPath(spec.job, node)};
    program.insert(program.end(), spec.job.args.begin(), spec.job.args.end());
    for (int local = 0; local < node.nproc; ++local) {
      RankEnv& rank = plan.ranks.emplace_back();
      rank.rank = first_ranks[i] + local;
      rank.local_rank = local;
      rank.node = node.name;
      rank.address = node.address;
      RankContract contract = ForRank(spec.job.launcher, rank.rank, local, generation, program);
      rank.env = RankEnvironment(node_envs.back(), contract.env);
      rank.argv = std::move(contract.argv);
    }
  }
  if (check_only) {
    plan.phases.push_back(
        PreflightPhase(spec, node_envs, inputs, PreflightMode::kCheckOnly));
  } else {
    plan.phases.push_back(BuildPhase(spec));
    plan.phases.push_back(KeysPhase(spec));
    plan.phases.push_back(SyncPhase(spec, inputs));
    plan.phases.push_back(EnvironmentPhase(spec, node_envs));
    plan.phases.push_back(PreflightPhase(spec, node_envs, inputs, PreflightMode::kApply));
    plan.phases.push_back(LaunchPhase(spec, first_ranks));
  }
  plan.hash = PlanHash(plan);
  return plan;
}

}  // namespace

absl::StatusOr<Plan> CompilePlan(const ClusterSpec& spec,
                                 const CompileInputs& inputs) {
  return Compile(spec, inputs, /*check_only=*/false);
}

absl::StatusOr<Plan> CompileCheckPlan(const ClusterSpec& spec,
                                      const CompileInputs& inputs) {
  return Compile(spec, inputs, /*check_only=*/true);
}

}  // namespace fleetplan
