#include "tools/secure/crypto_api.h"

#include "tools/util/lazy_library.h"

namespace fleetplan {

absl::StatusOr<CryptoApi> LoadCrypto(const char* soname) {
  absl::StatusOr<LazyLibrary> library = LazyLibrary::Open(soname, "libssl3", "a keyed digest");
  if (!library.ok()) return library.status();
  CryptoApi api{};
  library->Load(api.hmac, "HMAC");
  library->Load(api.sha256, "EVP_sha256");
  if (absl::Status complete = library->Check(); !complete.ok()) return complete;
  return api;
}

absl::StatusOr<const CryptoApi*> Crypto() {
  static const absl::StatusOr<CryptoApi>* const api =
      new absl::StatusOr<CryptoApi>(LoadCrypto(kCryptoLibrary));
  if (!api->ok()) return api->status();
  return &**api;
}

}  // namespace fleetplan
