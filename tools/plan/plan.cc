#include "tools/plan/plan.h"

namespace fleetplan {

absl::string_view PhaseName(PhaseKind phase) {
  switch (phase) {
    case PhaseKind::kBuild:
      return "build";
    case PhaseKind::kKeys:
      return "keys";
    case PhaseKind::kSync:
      return "sync";
    case PhaseKind::kEnvironment:
      return "environment";
    case PhaseKind::kPreflight:
      return "preflight";
    case PhaseKind::kLaunch:
      return "launch";
  }
  return "unknown";
}

absl::string_view StepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kBazelBuild:
      return "bazel-build";
    case StepKind::kEnsureKey:
      return "ensure-key";
    case StepKind::kAuthorizeKey:
      return "authorize-key";
    case StepKind::kSyncTree:
      return "sync-tree";
    case StepKind::kWriteEnv:
      return "write-env";
    case StepKind::kCheck:
      return "check";
    case StepKind::kLaunchAgent:
      return "launch-agent";
  }
  return "unknown";
}

bool SyncsSource(const Step& step) {
  if (step.kind != StepKind::kSyncTree) return false;
  for (const auto& [key, value] : step.inputs) {
    if (key == "source") return true;
  }
  return false;
}

const Phase* FindPhase(const Plan& plan, PhaseKind kind) {
  for (const Phase& phase : plan.phases) {
    if (phase.kind == kind) return &phase;
  }
  return nullptr;
}

}  // namespace fleetplan
