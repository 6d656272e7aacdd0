#include "plugins/ssh/libssh_api.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

TEST(LibsshApiTest, OpensTheSystemLibsshOnce) {
  FP_ASSERT_OK_AND_ASSIGN(const LibsshApi* api, OpenLibssh());
  ssh_session session = api->new_session();
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(api->options_set(session, SSH_OPTIONS_HOST, "example.invalid"), SSH_OK);
  EXPECT_FALSE(api->is_connected(session));
  api->free_session(session);
  FP_ASSERT_OK_AND_ASSIGN(const LibsshApi* again, OpenLibssh());
  EXPECT_EQ(again, api);
  EXPECT_EQ(&Libssh(), api);
}

// What the user is told when the library is not installed (its package),
// or when another library stands under its name.
TEST(LibsshApiTest, RefusesAMissingOrForeignLibraryByName) {
  EXPECT_THAT(LoadLibssh("libssh-not-here.so.4"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("needs libssh-not-here.so.4 (Debian package libssh-4)")));
  EXPECT_THAT(LoadLibssh("libz.so.1"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("libz.so.1 lacks ssh_new")));
}

}  // namespace
}  // namespace fleetplan
