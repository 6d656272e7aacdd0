#include "tools/secure/crypto_api.h"

#include "tools/util/lazy_library.h"

namespace fleetplan {

absl::StatusOr<CryptoApi> LoadCrypto(const char* soname) {
  absl::StatusOr<LazyLibrary> library = LazyLibrary::Open(soname, "libssl3", "a keyed digest");
  if (!library.ok()) return library.status();
  CryptoApi api{};
  library->Load(api.hmac, "HMAC");
  library->Load(api.sha256, "EVP_sha256");
  return library->Complete(api);
}

absl::StatusOr<const CryptoApi*> Crypto() {
  return LazyLibrary::Once<CryptoApi>([] { return LoadCrypto(kCryptoLibrary); });
}

}  // namespace fleetplan
