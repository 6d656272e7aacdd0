#include "plugins/relative_path.h"

#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

TEST(RelativePathTest, JoinsUnderTheRoot) {
  EXPECT_THAT(JoinUnderRoot("/work", "a/b"), IsOkAndHolds(std::string("/work/a/b")));
  EXPECT_THAT(JoinUnderRoot("/", "a"), IsOkAndHolds(std::string("/a")));
  EXPECT_THAT(JoinUnderRoot("/work/", "a..b/c"), IsOkAndHolds(std::string("/work/a..b/c")));
}

TEST(RelativePathTest, RefusesPathsThatLeaveTheRoot) {
  EXPECT_THAT(JoinUnderRoot("/work", "/etc/passwd"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "path \"/etc/passwd\" must be relative to /work"));
  EXPECT_THAT(JoinUnderRoot("/work", ""), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(CheckStaysUnderRoot("/work", "a/../../x"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "path \"a/../../x\" climbs out of /work through \"..\""));
  EXPECT_THAT(CheckStaysUnderRoot("/work", ".."), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fleetplan
