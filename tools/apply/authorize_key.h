#ifndef FLEETPLAN_TOOLS_APPLY_AUTHORIZE_KEY_H_
#define FLEETPLAN_TOOLS_APPLY_AUTHORIZE_KEY_H_

// The keys phase: the chief prints its public key, every other node
// appends it to ~/.ssh/authorized_keys.

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace fleetplan {

// The public key in the output of the chief's ensure-key command: the last
// line that starts with "ssh-" or "ecdsa-". nullopt when there is none.
std::optional<std::string> PublicKeyFromOutput(absl::string_view output);

// A POSIX sh command that appends `public_key` to ~/.ssh/authorized_keys
// unless the file already holds that exact line; creates ~/.ssh (0700) and
// the file (0600), keeps every other line, and adds a missing final newline
// before appending.
std::string AuthorizeKeyCommand(absl::string_view public_key);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_AUTHORIZE_KEY_H_
