#ifndef FLEETPLAN_TOOLS_SPEC_VALIDATORS_H_
#define FLEETPLAN_TOOLS_SPEC_VALIDATORS_H_

// Checks of single spec values, each a compiled RE2 pattern (or a small
// parse where a pattern cannot say it, as for IPv4 octets).

#include <cstddef>

#include "absl/strings/string_view.h"

namespace fleetplan {

// A DNS hostname (RFC 1123 labels), an IPv4 dotted quad or an IPv6 address.
bool IsValidAddress(absl::string_view address);

// A POSIX shell variable name: [A-Za-z_][A-Za-z0-9_]*.
bool IsValidEnvName(absl::string_view name);

// A portable POSIX user name: [a-z_][a-z0-9_-]*[$]?, at most 32 characters.
bool IsValidUserName(absl::string_view name);

// A Bazel label in the main repository: //pkg:name, //pkg or //pkg/sub.
bool IsValidBazelLabel(absl::string_view program);

// NCCL_SOCKET_IFNAME's forms: "auto", "eth0", "eth,ib" or "^lo,docker0"
// ("=" for exact matching is allowed too).
bool IsValidIfnameSpec(absl::string_view value);

// A lowercase identifier, as transport names are.
bool IsLowercaseIdentifier(absl::string_view name);

// The offset of the first control character in `text` (U+0000 to U+001F, or
// DEL) other than tab and newline when `allow_tab_newline`, or npos.
size_t FindControlCharacter(absl::string_view text, bool allow_tab_newline);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SPEC_VALIDATORS_H_
