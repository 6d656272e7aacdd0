#include "tools/util/path_under.h"

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

TEST(PathUnderTest, JoinsWithOneSlash) {
  EXPECT_EQ(PathUnder("/w", "a/b"), "/w/a/b");
  EXPECT_EQ(PathUnder("/w/", "a"), "/w/a");
  EXPECT_EQ(PathUnder("/w//", "a"), "/w/a");
}

TEST(PathUnderTest, DropsOneLeadingDotSlash) {
  EXPECT_EQ(PathUnder("/w", "./a"), "/w/a");
  EXPECT_EQ(PathUnder("/w", "././a"), "/w/./a");
}

TEST(PathUnderTest, UnderTheRootDirectory) {
  EXPECT_EQ(PathUnder("/", "a"), "/a");
  EXPECT_EQ(PathUnder("//", "a"), "/a");
}

TEST(PathUnderTest, ARelativeDirStaysRelative) {
  EXPECT_EQ(PathUnder("w", "a"), "w/a");
}

}  // namespace
}  // namespace fleetplan
