#include "tools/secure/ssl_api.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

TEST(SslApiTest, OpensTheSystemLibsslOnce) {
  FP_ASSERT_OK_AND_ASSIGN(const SslApi* api, Ssl());
  EXPECT_NE(api->client_method(), nullptr);
  // libcrypto's functions come through libssl's handle.
  EXPECT_EQ(api->memcmp("same", "same", 4), 0);
  FP_ASSERT_OK_AND_ASSIGN(const SslApi* again, Ssl());
  EXPECT_EQ(again, api);
}

// What the agent says when the library is not installed (its package), or
// when another library stands under its name (libcrypto has none of
// libssl's own functions).
TEST(SslApiTest, RefusesAMissingOrForeignLibraryByName) {
  EXPECT_THAT(
      LoadSsl("libssl-not-here.so.3"),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("a TLS channel needs libssl-not-here.so.3 (Debian package libssl3)")));
  EXPECT_THAT(LoadSsl("libcrypto.so.3"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("libcrypto.so.3 lacks OPENSSL_init_ssl, TLS_client_method")));
}

}  // namespace
}  // namespace fleetplan
