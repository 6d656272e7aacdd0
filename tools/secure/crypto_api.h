#ifndef FLEETPLAN_TOOLS_SECURE_CRYPTO_API_H_
#define FLEETPLAN_TOOLS_SECURE_CRYPTO_API_H_

// OpenSSL's libcrypto, opened when a command first needs it (the keyed
// digest of a spec's secrets) instead of linked into every fleetplan
// binary: its 21,000 relocations were the largest part of what the
// dynamic loader did before any command ran. The agents' TLS channels
// open it too, with libssl (ssl_api.h).

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "absl/status/statusor.h"

namespace fleetplan {

// The libcrypto functions the commands call, as loaded (their types taken
// from the headers' declarations, which are not linked).
struct CryptoApi {
  decltype(&HMAC) hmac;
  decltype(&EVP_sha256) sha256;
};

inline constexpr char kCryptoLibrary[] = "libcrypto.so.3";

// Opens libcrypto once per process; an error naming the library and its
// Debian package when it cannot be opened or lacks a function.
absl::StatusOr<const CryptoApi*> Crypto();

// Opens `soname` as libcrypto (Crypto's work, without keeping it; tests
// give other names).
absl::StatusOr<CryptoApi> LoadCrypto(const char* soname);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SECURE_CRYPTO_API_H_
