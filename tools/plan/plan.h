#ifndef FLEETPLAN_TOOLS_PLAN_PLAN_H_
#define FLEETPLAN_TOOLS_PLAN_PLAN_H_

// The execution plan: what apply will do, phase by phase and node by node.
// Plain data, computed from a ClusterSpec by CompilePlan (compile.h) with no
// I/O; rendered for people and machines by render.h; run by tools/apply.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "tools/protocol/agent_command.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

// Phases run in this order, with a barrier between them.
enum class PhaseKind { kBuild, kKeys, kSync, kEnvironment, kPreflight, kLaunch };

// "build", "keys", "sync", "environment", "preflight", "launch".
absl::string_view PhaseName(PhaseKind phase);

// What a step does, as the executor runs it.
enum class StepKind {
  kBazelBuild,
  kEnsureKey,
  kAuthorizeKey,
  kSyncTree,
  kWriteEnv,
  kCheck,
  kLaunchAgent,
};

// "bazel-build", "ensure-key", "authorize-key", "sync-tree", "write-env",
// "check", "launch-agent": the name plans show, plan JSON holds and step
// hashes digest.
absl::string_view StepKindName(StepKind kind);

// The node name of steps that run on the machine that runs apply.
inline constexpr absl::string_view kControllerNode = "(controller)";

// One thing to do on one node.
struct Step {
  PhaseKind phase = PhaseKind::kBuild;
  std::string node;  // a NodeSpec::name, or kControllerNode
  StepKind kind = StepKind::kBazelBuild;
  // Everything the step depends on, as shown in the plan and hashed.
  std::vector<std::pair<std::string, std::string>> inputs;
  // The shell command run on the node (/bin/sh -c), after its phase's
  // preamble, if the step runs one.
  std::string command;
  // A launch step's request, typed (its `command` is this rendered without
  // a run id); apply sets the run's id and renders it at launch.
  std::optional<AgentLaunch> launch;
  // The file the step writes on the node (path, content), if it writes one.
  std::string path;
  std::string content;
  // Runs beside the other steps of its phase, outside the parallelism
  // bound, with its stdin held open until they have all ended: the chief's
  // preflight, whose listener the other nodes' checks connect to.
  bool serves_phase = false;
  // The steps of a phase run in waves, in order: every step of wave 0, then
  // of wave 1. The keys phase's authorize-key steps (wave 1) need the key
  // its ensure-key (wave 0) prints.
  int wave = 0;
  // Hex digest of everything above; the node records it once the step is
  // done, and an unchanged step is skipped on the next apply.
  std::string hash;
};

struct Phase {
  PhaseKind kind = PhaseKind::kBuild;
  std::vector<Step> steps;  // at most one per node, in node order
  // Shell text that every step command of the phase runs first (the
  // functions all preflight checks share), held once rather than per node.
  // Part of every step's hash.
  std::string preamble;
};

// Everything one rank gets in its environment.
struct RankEnv {
  int rank = 0;
  int local_rank = 0;
  std::string node;     // the node's name
  std::string address;  // the node's address
  EnvList env;          // sorted by name; the run id as kPlannedRunId
  // The rank's command line: the program, its args and the launcher's
  // argument (launcher_contract.h).
  std::vector<std::string> argv;
};

struct Plan {
  std::string spec_name;
  std::string spec_path;
  std::string spec_hash;    // digest of the resolved spec
  std::string source_hash;  // digest of the synced tree's manifest ("" without [sync])
  std::vector<Phase> phases;
  std::vector<RankEnv> ranks;
  std::string hash;  // digest of all of the above
};

// Whether a sync-tree step syncs the spec's source tree ([sync]); without
// it, the step sends the launch agent and the built program alone.
bool SyncsSource(const Step& step);

// The phase of `kind` in `plan`, or null when it has none.
const Phase* FindPhase(const Plan& plan, PhaseKind kind);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PLAN_PLAN_H_
