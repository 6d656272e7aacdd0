#ifndef FLEETPLAN_TOOLS_AGENT_REDACTOR_H_
#define FLEETPLAN_TOOLS_AGENT_REDACTOR_H_

// Hides secret values in a rank's output before it is written anywhere
// (its log, the agent's output, and so `logs` and apply): each occurrence
// of a value becomes "***". Output arrives in chunks cut anywhere, so the
// end of a chunk that could begin a value is held back until the next
// chunk says whether it does.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace fleetplan {

inline constexpr absl::string_view kRedacted = "***";

class Redactor {
 public:
  // Empty values are ignored; a longer value wins over one it contains.
  explicit Redactor(std::vector<std::string> values);

  // True when there is nothing to hide: Feed returns its chunk as it is.
  bool empty() const { return values_.empty(); }

  // Appends `chunk`; returns what can be written now, values replaced.
  std::string Feed(absl::string_view chunk);

  // What was held back (a value's beginning that the output ended with).
  std::string Flush();

 private:
  std::vector<std::string> values_;  // longest first
  std::string pending_;
};

// The values of the variables that `names_var` (a variable of this
// process's environment) lists, comma-separated: the secrets env.sh gave
// the launch agent. Unset names are left out.
std::vector<std::string> SecretValuesFromEnvironment(absl::string_view names_var);

// The names `names_var` lists that this process's environment lacks.
std::vector<std::string> MissingSecrets(absl::string_view names_var);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_REDACTOR_H_
