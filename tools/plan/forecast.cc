#include "tools/plan/forecast.h"

#include "absl/strings/str_cat.h"
#include "tools/util/digest.h"

namespace fleetplan {
namespace {

const NodeState& StateOf(const std::map<std::string, NodeState>& nodes,
                         const std::string& node) {
  static const NodeState* kNothing = new NodeState();
  auto it = nodes.find(node);
  return it == nodes.end() ? *kNothing : it->second;
}

// The change a step makes by its own record: none when the node recorded
// its hash.
Change ByRecord(const Step& step, const NodeState& state, absl::string_view secrets_digest) {
  auto it = state.records.find(step.phase);
  if (it == state.records.end()) return Change::kAdd;
  return it->second == RecordedHash(step, secrets_digest) ? Change::kUnchanged : Change::kChange;
}

bool Recorded(const Phase& phase, const std::map<std::string, NodeState>& nodes,
              absl::string_view secrets_digest) {
  for (const Step& step : phase.steps) {
    if (ByRecord(step, StateOf(nodes, step.node), secrets_digest) != Change::kUnchanged) {
      return false;
    }
  }
  return true;
}

StepForecast SyncForecast(const Step& step, const NodeState& state) {
  StepForecast forecast;
  if (!SyncsSource(step)) {
    // The agent and the built program alone: whether they change is known
    // once apply has them.
    forecast.change = state.manifest_recorded ? Change::kUnknown : Change::kAdd;
    forecast.note = state.manifest_recorded ? "changes only if the agent or the program does"
                                            : "sends the launch agent";
    return forecast;
  }
  if (!state.tree_recorded) {
    forecast.change = Change::kAdd;
    forecast.note = absl::StrCat("sends all ", state.files_to_send, " files, ",
                                 state.bytes_to_send, " bytes");
  } else if (state.files_to_send == 0 && state.files_to_remove == 0) {
    forecast.change = Change::kUnchanged;
  } else {
    forecast.change = Change::kChange;
    forecast.note = absl::StrCat("sends ", state.files_to_send, " files, ",
                                 state.bytes_to_send, " bytes; removes ", state.files_to_remove);
  }
  return forecast;
}

}  // namespace

char ChangeMarker(Change change) {
  switch (change) {
    case Change::kAdd:
      return '+';
    case Change::kChange:
      return '~';
    case Change::kUnchanged:
      return '=';
    case Change::kUnknown:
      return '?';
  }
  return '?';
}

std::string RecordedHash(const Step& step, absl::string_view secrets_digest) {
  if (step.kind != StepKind::kWriteEnv || secrets_digest.empty()) return step.hash;
  return Digester().Add(step.hash).Add(secrets_digest).Hex();
}

std::vector<StepForecast> ForecastPlan(const Plan& plan,
                                       const std::map<std::string, NodeState>& nodes,
                                       absl::string_view secrets_digest) {
  std::vector<StepForecast> forecasts;
  bool earlier_changes = false;
  for (const Phase& phase : plan.phases) {
    if (phase.kind == PhaseKind::kPreflight || phase.kind == PhaseKind::kLaunch) {
      // All or none. Preflight is skipped only with the launch, which a
      // node's launch record lets it skip.
      const Phase* launch = FindPhase(plan, PhaseKind::kLaunch);
      bool recorded = Recorded(phase, nodes, secrets_digest) &&
                      (phase.kind == PhaseKind::kLaunch || launch == nullptr ||
                       Recorded(*launch, nodes, secrets_digest));
      bool runs = earlier_changes || !recorded;
      for (const Step& step : phase.steps) {
        StepForecast forecast;
        Change own = ByRecord(step, StateOf(nodes, step.node), secrets_digest);
        forecast.change = !runs ? Change::kUnchanged
                          : own == Change::kUnchanged ? Change::kChange
                                                      : own;
        if (runs && own == Change::kUnchanged) {
          forecast.note = earlier_changes ? "runs again: an earlier step changes"
                                          : "runs again: not done on every node";
        }
        forecasts.push_back(std::move(forecast));
      }
      earlier_changes = earlier_changes || (runs && !phase.steps.empty());
      continue;
    }
    for (const Step& step : phase.steps) {
      const NodeState& state = StateOf(nodes, step.node);
      StepForecast forecast;
      if (step.kind == StepKind::kBazelBuild) {
        // Whether the program changes is known once bazel has run; the
        // forecast takes it as unchanged.
        forecast.change = Change::kUnknown;
        forecast.note = "runs; changes only if the program does";
      } else if (step.kind == StepKind::kSyncTree) {
        forecast = SyncForecast(step, state);
      } else if (step.kind == StepKind::kAuthorizeKey &&
                 ByRecord(step, state, secrets_digest) != Change::kAdd) {
        // Its record covers the chief's key, which apply reads first.
        forecast.change = Change::kUnknown;
        forecast.note = "unchanged if the chief's key is";
      } else {
        forecast.change = ByRecord(step, state, secrets_digest);
      }
      if (forecast.change == Change::kAdd || forecast.change == Change::kChange) {
        earlier_changes = true;
      }
      forecasts.push_back(std::move(forecast));
    }
  }
  return forecasts;
}

}  // namespace fleetplan
