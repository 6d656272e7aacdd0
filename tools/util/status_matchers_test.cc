#include "tools/util/status_matchers.h"

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

using ::testing::Not;

TEST(StatusMatchersTest, StringMatchesASubstringOfTheMessage) {
  absl::Status status = absl::NotFoundError("no such file: /a/b");
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kNotFound, "such file"));
  EXPECT_THAT(status, Not(StatusIs(absl::StatusCode::kNotFound, "other")));
  EXPECT_THAT(status, Not(StatusIs(absl::StatusCode::kInternal, "such file")));
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kNotFound,
                               ::testing::StartsWith("no such")));
}

TEST(StatusMatchersTest, IsOkSeesStatusAndStatusOr) {
  EXPECT_THAT(absl::OkStatus(), IsOk());
  EXPECT_THAT(absl::StatusOr<int>(3), IsOk());
  EXPECT_THAT(absl::StatusOr<int>(absl::InternalError("x")), Not(IsOk()));
}

}  // namespace
}  // namespace fleetplan
