#include "tools/secure/crypto_api.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

TEST(CryptoApiTest, OpensTheSystemLibcryptoOnce) {
  FP_ASSERT_OK_AND_ASSIGN(const CryptoApi* api, Crypto());
  EXPECT_NE(api->sha256(), nullptr);
  FP_ASSERT_OK_AND_ASSIGN(const CryptoApi* again, Crypto());
  EXPECT_EQ(again, api);
}

// What the user is told when the library is not installed (its package),
// or when another library stands under its name.
TEST(CryptoApiTest, RefusesAMissingOrForeignLibraryByName) {
  EXPECT_THAT(LoadCrypto("libcrypto-not-here.so.3"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("needs libcrypto-not-here.so.3 (Debian package libssl3)")));
  EXPECT_THAT(LoadCrypto("libz.so.1"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("libz.so.1 lacks HMAC")));
}

}  // namespace
}  // namespace fleetplan
