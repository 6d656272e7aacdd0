#include "tools/apply/key_steps.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "tools/apply/authorize_key.h"
#include "tools/util/digest.h"

namespace fleetplan {

StepOutcome KeySteps::EnsureKey(const Step& step) {
  // Always runs: it only creates a key when missing, and the other nodes
  // need the key it prints.
  bool held = context_.records.Holds(step, step.hash);
  std::string output;
  StepOutcome outcome = RunStepCommand(context_, step, step.command, &output);
  if (outcome.status == StepStatus::kFailed) return outcome;
  std::optional<std::string> key = PublicKeyFromOutput(output);
  if (!key.has_value()) {
    return StepOutcome::Failed(absl::StrCat(
        "node '", step.node, "', phase keys: ensure-key printed no public key"));
  }
  {
    absl::MutexLock lock(&mu_);
    chief_key_ = *key;
  }
  if (absl::Status recorded = context_.records.Record(step, step.hash); !recorded.ok()) {
    return StepOutcome::Failed(absl::StrCat("node '", step.node, "': ", recorded.message()));
  }
  if (held) outcome.status = StepStatus::kUnchanged;
  return outcome;
}

StepOutcome KeySteps::AuthorizeKey(const Step& step) {
  std::string key;
  {
    absl::MutexLock lock(&mu_);
    key = chief_key_;
  }
  if (key.empty()) {
    return StepOutcome::Failed(absl::StrCat("node '", step.node,
                                            "', phase keys: the chief's key is unknown "
                                            "(no ensure-key step ran)"));
  }
  // The recorded hash covers the key too: a new chief key is authorized.
  std::string hash = Digester().Add(step.hash).Add(key).Hex();
  if (context_.records.Holds(step, hash)) return StepOutcome::Unchanged();
  std::string output;
  StepOutcome outcome = RunStepCommand(context_, step, AuthorizeKeyCommand(key), &output);
  if (outcome.status == StepStatus::kFailed) return outcome;
  if (absl::Status recorded = context_.records.Record(step, hash); !recorded.ok()) {
    return StepOutcome::Failed(absl::StrCat("node '", step.node, "': ", recorded.message()));
  }
  return outcome;
}

}  // namespace fleetplan
