#ifndef FLEETPLAN_TOOLS_UTIL_DIGEST_H_
#define FLEETPLAN_TOOLS_UTIL_DIGEST_H_

// Content digests: XXH3-128 (libxxhash), as 32 lowercase hex digits. Used
// for step hashes, plan hashes and sync manifests; not a security boundary.

#include <string>

#include "absl/strings/string_view.h"

namespace fleetplan {

// Incremental digest over a sequence of fields. Each field is length-
// prefixed, so ("ab", "c") and ("a", "bc") differ.
class Digester {
 public:
  Digester();
  ~Digester();
  Digester(const Digester&) = delete;
  Digester& operator=(const Digester&) = delete;

  Digester& Add(absl::string_view field);
  // Adds raw bytes with no length prefix (for streaming file content).
  Digester& AddBytes(const void* data, size_t size);
  std::string Hex() const;

 private:
  void* state_;  // XXH3_state_t
};

// Digest of one byte string.
std::string DigestHex(absl::string_view data);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_UTIL_DIGEST_H_
