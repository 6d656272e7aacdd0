#include "tools/util/flags.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

ABSL_FLAG(int, connect_timeout, 10, "for the test");
ABSL_FLAG(bool, force, false, "for the test");

namespace fleetplan {
namespace {

TEST(FlagsTest, DashedNamesBecomeUnderscoredButValuesStay) {
  const char* argv[] = {"apply", "--connect-timeout=5", "-out", "my-plan.json",
                        "--x-y", "--", "--not-a-flag"};
  std::vector<std::string> args = NormalizeFlagNames(7, const_cast<char**>(argv));
  EXPECT_THAT(args, ::testing::ElementsAre("apply", "--connect_timeout=5", "-out",
                                           "my-plan.json", "--x_y", "--",
                                           "--not-a-flag"));
}

TEST(FlagsTest, UnknownFlagsAreNamed) {
  EXPECT_THAT(CheckFlagsDefined({"apply", "--connect_timeout=3", "--noforce", "spec.toml"}),
              IsOk());
  EXPECT_THAT(CheckFlagsDefined({"apply", "--paralelism=3"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr("--paralelism=3")));
  EXPECT_THAT(CheckFlagsDefined({"apply", "--", "--whatever"}), IsOk());
  // Named as documented, with dashes, after NormalizeFlagNames.
  EXPECT_THAT(CheckFlagsDefined({"apply", "--connect_timout=3"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "unknown flag --connect-timout=3 (see --help)"));
}

TEST(FlagsTest, UsageFlagsAreKnown) {
  EXPECT_THAT(CheckFlagsDefined({"plan", "--help"}), IsOk());
  EXPECT_THAT(CheckFlagsDefined({"plan", "--helpfull"}), IsOk());
  EXPECT_THAT(CheckFlagsDefined({"plan", "--hlep"}),
              StatusIs(absl::StatusCode::kInvalidArgument, "--hlep"));
}

TEST(FlagsTest, Color) {
  EXPECT_EQ(UseColor("always", -1).value(), true);
  EXPECT_EQ(UseColor("never", 1).value(), false);
  EXPECT_EQ(UseColor("auto", -1).value(), false);
  EXPECT_FALSE(UseColor("sometimes", 1).ok());
}

}  // namespace
}  // namespace fleetplan
