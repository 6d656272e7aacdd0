#include "tools/util/path_policy.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

TEST(NormalizeAbsolutePathTest, DropsDotsAndRepeatedSlashes) {
  EXPECT_EQ(NormalizeAbsolutePath("/a/./b/../c/"), "/a/c");
  EXPECT_EQ(NormalizeAbsolutePath("//a///b"), "/a/b");
  EXPECT_EQ(NormalizeAbsolutePath("/a/../b"), "/b");
}

TEST(NormalizeAbsolutePathTest, StaysAtTheTop) {
  EXPECT_EQ(NormalizeAbsolutePath("/../../x"), "/x");
  EXPECT_EQ(NormalizeAbsolutePath("/"), "/");
  EXPECT_EQ(NormalizeAbsolutePath(""), "/");
  EXPECT_EQ(NormalizeAbsolutePath("a/b"), "/a/b");
}

TEST(IsCleanAbsolutePathTest, RefusesRelativeAndDots) {
  EXPECT_TRUE(IsCleanAbsolutePath("/home/ubuntu/project"));
  EXPECT_TRUE(IsCleanAbsolutePath("/"));
  EXPECT_FALSE(IsCleanAbsolutePath("home/x"));
  EXPECT_FALSE(IsCleanAbsolutePath(""));
  EXPECT_FALSE(IsCleanAbsolutePath("/a/../b"));
  EXPECT_FALSE(IsCleanAbsolutePath("/a/./b"));
}

TEST(DirnameTest, IsTheFolderAPathIsIn) {
  EXPECT_EQ(Dirname("/w/a/b.txt"), "/w/a");
  EXPECT_EQ(Dirname("/b"), "/");
  EXPECT_EQ(Dirname("b"), ".");
  EXPECT_EQ(Dirname("a/b"), "a");
}

TEST(DirnameTest, IgnoresTrailingAndRepeatedSlashes) {
  EXPECT_EQ(Dirname("a/b/"), "a");
  EXPECT_EQ(Dirname("/w/a//b"), "/w/a");
  EXPECT_EQ(Dirname("/"), "/");
  EXPECT_EQ(Dirname("//b"), "/");
  EXPECT_EQ(Dirname(""), ".");
}

TEST(BasenameTest, IsTheLastPart) {
  EXPECT_EQ(Basename("/usr/bin/python3"), "python3");
  EXPECT_EQ(Basename("python3"), "python3");
  EXPECT_EQ(Basename("a/b/"), "b");
  EXPECT_EQ(Basename("/"), "/");
  EXPECT_EQ(Basename(""), "");
}

TEST(HiddenBesideTest, NamesAHiddenFileInTheSameFolder) {
  EXPECT_EQ(HiddenBeside("/w/a/b", ".tmp"), "/w/a/.b.tmp");
  EXPECT_EQ(HiddenBeside("/b", "-1"), "/.b-1");
  EXPECT_EQ(HiddenBeside("b", ".tmp"), ".b.tmp");
}

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
  EXPECT_EQ(PathUnder("w", "a"), "w/a");
}

TEST(StaysUnderRootTest, JoinsUnderTheRoot) {
  EXPECT_THAT(JoinUnderRoot("/work", "a/b"), IsOkAndHolds(std::string("/work/a/b")));
  EXPECT_THAT(JoinUnderRoot("/", "a"), IsOkAndHolds(std::string("/a")));
  EXPECT_THAT(JoinUnderRoot("/work/", "a..b/c"), IsOkAndHolds(std::string("/work/a..b/c")));
  EXPECT_THAT(JoinUnderRoot("/work", ".fleetplan/bin/x"),
              IsOkAndHolds(std::string("/work/.fleetplan/bin/x")));
  EXPECT_THAT(JoinUnderRoot("/work", "..."), IsOkAndHolds(std::string("/work/...")));
}

TEST(StaysUnderRootTest, RefusesAbsoluteAndEmpty) {
  EXPECT_THAT(JoinUnderRoot("/work", "/etc/passwd"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "path \"/etc/passwd\" must be relative to /work"));
  EXPECT_THAT(JoinUnderRoot("/work", ""), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(StaysUnderRootTest, RefusesDotDot) {
  EXPECT_THAT(CheckStaysUnderRoot("/work", "a/../../x"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "path \"a/../../x\" climbs out of /work through \"..\""));
  EXPECT_THAT(CheckStaysUnderRoot("/work", ".."), StatusIs(absl::StatusCode::kInvalidArgument));
  // Even a ".." that would come back under the root: one spelling per file.
  EXPECT_THAT(CheckStaysUnderRoot("/work", "a/../b"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(StaysUnderRootTest, RefusesDotAndEmptyParts) {
  for (const char* path : {".", "./a", "a/.", "a/./b", "a//b", "a/", "//a"}) {
    EXPECT_THAT(CheckStaysUnderRoot("/work", path), StatusIs(absl::StatusCode::kInvalidArgument))
        << path;
  }
  EXPECT_THAT(CheckStaysUnderRoot("/work", "a//b"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "path \"a//b\" has an empty or \".\" part (under /work)"));
}

TEST(StaysUnderRootTest, RefusesANulByteAndEscapesItInTheMessage) {
  std::string path("a\0/../../etc", 12);
  EXPECT_THAT(CheckStaysUnderRoot("/work", path),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("a\\x00/../../etc")));
  EXPECT_THAT(CheckStaysUnderRoot("/work", std::string("x\0", 2)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("NUL")));
}

TEST(StaysUnderRootTest, RefusesWhatLinuxCouldNotName) {
  EXPECT_THAT(CheckStaysUnderRoot("/work", std::string(255, 'a')), IsOk());
  EXPECT_THAT(CheckStaysUnderRoot("/work", std::string(256, 'a')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("over 255 bytes")));
  std::string deep;
  while (deep.size() < 4000) absl::StrAppend(&deep, "abcdefgh/");
  deep += "x";
  EXPECT_THAT(CheckStaysUnderRoot("/work", deep), IsOk());
  while (deep.size() <= 4095) absl::StrAppend(&deep, "/abcdefgh");
  EXPECT_THAT(CheckStaysUnderRoot("/work", deep),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("over 4095 bytes")));
}

}  // namespace
}  // namespace fleetplan
