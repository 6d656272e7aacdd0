#ifndef FLEETPLAN_TOOLS_SECURE_JOB_KEY_H_
#define FLEETPLAN_TOOLS_SECURE_JOB_KEY_H_

// The per-job key: 32 bytes from the operating system's CSPRNG, made by
// apply for each apply and handed to every node through the transport
// only (a 0600 file written over the ssh channel, the Docker API or
// Slurm's step; never a command line). The agents prove it to each other
// on every connection they open (tls_channel.h); nothing else holds it.

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

struct JobKey {
  std::array<uint8_t, 32> bytes{};

  absl::string_view view() const {
    return absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
};

// A fresh key from getrandom(2). Internal when the kernel refuses.
absl::StatusOr<JobKey> MakeJobKey();

// What the key file holds: 64 lowercase hex digits and a newline.
std::string JobKeyFileText(const JobKey& key);

// The key in `text` (JobKeyFileText's form). InvalidArgument otherwise,
// without repeating the text.
absl::StatusOr<JobKey> ParseJobKey(absl::string_view text);

// Reads the key file at `path`, refusing one that another user could read
// or write, or that belongs to another user (FailedPrecondition, saying
// which): a key others can read proves nothing. NotFound when missing.
absl::StatusOr<JobKey> ReadJobKeyFile(const std::string& path);

// HMAC-SHA256 of `data` under `key`, as 64 hex digits: what may be shown
// of a secret (a keyed digest tells a change without telling the value).
// OpenSSL's, opened on first use (crypto_api.h): FailedPrecondition when
// libcrypto cannot be opened.
absl::StatusOr<std::string> KeyedDigestHex(absl::string_view key, absl::string_view data);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SECURE_JOB_KEY_H_
