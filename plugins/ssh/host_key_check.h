#ifndef FLEETPLAN_PLUGINS_SSH_HOST_KEY_CHECK_H_
#define FLEETPLAN_PLUGINS_SSH_HOST_KEY_CHECK_H_

// Host key checking against known_hosts, as `ssh -o StrictHostKeyChecking`
// does it: yes by default, accept-new on request.

#include <string>

#include <libssh/libssh.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fleetplan {

// Checks the key of the server `session` is connected to against the
// session's known_hosts file. `node` names the node in errors.
// FailedPrecondition for a key not in the file, unless `accept_new`, which
// records it there; PermissionDenied for a key that differs from the one
// recorded, always. Both name the node and the key's SHA256 fingerprint.
absl::Status VerifyHostKey(ssh_session session, const std::string& node, bool accept_new);

// The server's key fingerprint as ssh prints it: "SHA256:<base64>".
absl::StatusOr<std::string> ServerKeyFingerprint(ssh_session session);

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SSH_HOST_KEY_CHECK_H_
