#include "tools/apply/env_step.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "tools/plan/forecast.h"
#include "tools/plan/node_scripts.h"
#include "tools/protocol/node_layout.h"

namespace fleetplan {

StepOutcome WriteEnvironment(const StepContext& context, const Step& step) {
  bool secrets = !context.spec.secrets.empty();
  std::string hash = RecordedHash(step, context.options.secrets_digest);
  if (context.records.Holds(step, hash)) return StepOutcome::Unchanged();
  Connection& connection = context.channels.Of(step.node);
  // The values before the env.sh that sources them; the transports create
  // the file with this mode, never readable by others in between.
  absl::Status written =
      secrets ? connection.WriteFile(SecretsPath(*context.FindNode(step.node)),
                                     SecretsFileText(context.options.secret_values), 0600)
              : absl::OkStatus();
  if (written.ok()) written = connection.WriteFile(step.path, step.content, 0600);
  if (written.ok()) written = context.records.Record(step, hash);
  if (!written.ok()) {
    return StepOutcome::Failed(absl::StrCat("node '", step.node, "', phase ",
                                            PhaseName(step.phase), ": writing ", step.path,
                                            ": ", written.message()));
  }
  return StepOutcome();
}

}  // namespace fleetplan
