#include "tools/util/digest.h"

#include <cstdint>
#include <cstdio>

#include "xxhash.h"

namespace fleetplan {

Digester::Digester() : state_(XXH3_createState()) {
  XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_));
}

Digester::~Digester() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

Digester& Digester::Add(absl::string_view field) {
  uint64_t size = field.size();
  AddBytes(&size, sizeof(size));
  return AddBytes(field.data(), field.size());
}

Digester& Digester::AddBytes(const void* data, size_t size) {
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), data, size);
  return *this;
}

std::string Digester::Hex() const {
  XXH128_hash_t hash = XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_));
  char buffer[33];
  std::snprintf(buffer, sizeof(buffer), "%016llx%016llx",
                static_cast<unsigned long long>(hash.high64),
                static_cast<unsigned long long>(hash.low64));
  return buffer;
}

std::string DigestHex(absl::string_view data) {
  Digester digester;
  digester.AddBytes(data.data(), data.size());
  return digester.Hex();
}

}  // namespace fleetplan
