#include "tools/process/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

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

TEST(FilesTest, IsRegularFileIsTrueForAFileOnly) {
  std::string dir = TempDir() + "/regular";
  ASSERT_THAT(WriteFileAtomic(dir + "/file", "x", 0644), IsOk());
  EXPECT_TRUE(IsRegularFile(dir + "/file"));
  EXPECT_FALSE(IsRegularFile(dir));
  EXPECT_FALSE(IsRegularFile(dir + "/missing"));
}

// Through a folder's descriptor: names without "." and "..", and only a
// regular file's bytes (not a link's target, not a folder).
TEST(FilesTest, AFolderOpenAtADescriptorIsListedAndItsRegularFilesRead) {
  std::string dir = TempDir();
  ASSERT_THAT(WriteFileAtomic(dir + "/a", "alpha", 0600), IsOk());
  ASSERT_THAT(MakeDirs(dir + "/d"), IsOk());
  ASSERT_EQ(symlink((dir + "/a").c_str(), (dir + "/l").c_str()), 0);
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::vector<std::string> names;
  ASSERT_TRUE(ListFolderAt(fd, &names));
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("a", "d", "l"));
  EXPECT_EQ(ReadRegularFileAt(fd, "a"), std::optional<std::string>("alpha"));
  EXPECT_EQ(ReadRegularFileAt(fd, "l"), std::nullopt);
  EXPECT_EQ(ReadRegularFileAt(fd, "d"), std::nullopt);
  EXPECT_EQ(ReadRegularFileAt(fd, "missing"), std::nullopt);
  // The descriptor is still the caller's, and still open.
  names.clear();
  EXPECT_TRUE(ListFolderAt(fd, &names));
  EXPECT_EQ(close(fd), 0);
  EXPECT_FALSE(ListFolderAt(fd, &names));
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
