#ifndef FLEETPLAN_TOOLS_CLI_SECRET_SOURCES_H_
#define FLEETPLAN_TOOLS_CLI_SECRET_SOURCES_H_

// Reading the [secrets] values on the machine that runs apply, and the
// keyed digest that tells apply a value changed without keeping the value
// (nor its plain hash, which a short or guessable value would not survive).
// The plan only names the secrets; this is the I/O edge that reads them.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/secure/job_key.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

// Each secret's value, in the order of `secrets`: an `env` source's
// variable (set, possibly empty); a `file` source's whole content (a
// leading "~/" is $HOME); a `command` source's stdout (`/bin/sh -c`, its
// stderr left on ours), each less one trailing newline. FailedPrecondition
// naming the first secret that has no value (an unset variable, a file
// that cannot be read, a command that fails), never quoting a value.
absl::StatusOr<EnvList> ResolveSecrets(const std::vector<SecretSpec>& secrets);

// Where the digest key lives: $XDG_CONFIG_HOME/fleetplan/secret-digest.key,
// else ~/.config/fleetplan/secret-digest.key. Kept with the user's
// configuration, not in the project or on a node: one key per user, so a
// digest recorded on a node means nothing to whoever reads it there.
std::string DigestKeyPath();

// The key at `path`, made (32 random bytes, a 0600 file, its folder
// created) when missing. ReadJobKeyFile's errors otherwise: a key file
// others can read is refused.
absl::StatusOr<JobKey> LoadOrMakeDigestKey(const std::string& path);

// HMAC-SHA256 under `key` of every (name, value), unambiguously framed;
// "" without secrets.
absl::StatusOr<std::string> SecretsDigest(const JobKey& key, const EnvList& values);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_SECRET_SOURCES_H_
