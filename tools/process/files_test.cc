#include "tools/process/files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

std::string TempDir() {
  std::string templ = std::string(getenv("TEST_TMPDIR")) + "/filesXXXXXX";
  return mkdtemp(templ.data());
}

uint32_t Mode(const std::string& path) {
  struct stat st;
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(FilesTest, WriteFileAtomicCreatesParentsSetsModeAndReplaces) {
  std::string path = TempDir() + "/a/b/c.txt";
  ASSERT_THAT(WriteFileAtomic(path, "one", 0600), IsOk());
  EXPECT_EQ(Mode(path), 0600u);
  ASSERT_THAT(WriteFileAtomic(path, std::string("t\0o", 3), 0755), IsOk());
  FP_ASSERT_OK_AND_ASSIGN(std::string content, ReadFileToString(path));
  EXPECT_EQ(content, std::string("t\0o", 3));
  EXPECT_EQ(Mode(path), 0755u);
  // No temporary file is left beside it.
  FP_ASSERT_OK_AND_ASSIGN(std::string listing, ReadFileToString(path));
  EXPECT_NE(access((path + ".tmp").c_str(), F_OK), 0);
}

TEST(FilesTest, ReadMissingFileIsNotFound) {
  EXPECT_THAT(ReadFileToString(TempDir() + "/missing"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing")));
}

TEST(FilesTest, CopyFileAtomicCopiesContentAndMode) {
  std::string dir = TempDir();
  std::string big(200000, 'x');
  ASSERT_THAT(WriteFileAtomic(dir + "/src", big, 0644), IsOk());
  ASSERT_THAT(CopyFileAtomic(dir + "/src", dir + "/d/e/dst", 0700), IsOk());
  FP_ASSERT_OK_AND_ASSIGN(std::string content, ReadFileToString(dir + "/d/e/dst"));
  EXPECT_EQ(content, big);
  EXPECT_EQ(Mode(dir + "/d/e/dst"), 0700u);
  EXPECT_THAT(CopyFileAtomic(dir + "/nope", dir + "/x", 0644),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("nope")));
}

TEST(FilesTest, MakeDirsRefusesAFileInTheWay) {
  std::string dir = TempDir();
  ASSERT_THAT(WriteFileAtomic(dir + "/f", "", 0644), IsOk());
  EXPECT_THAT(MakeDirs(dir + "/f/g"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("not a directory")));
  EXPECT_THAT(MakeDirs(dir + "/x/y/z"), IsOk());
  EXPECT_THAT(MakeDirs(dir + "/x/y/z"), IsOk());
}

}  // namespace
}  // namespace fleetplan
