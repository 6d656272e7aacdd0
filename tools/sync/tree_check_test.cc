#include "tools/sync/tree_check.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <utime.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class TreeCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = absl::StrCat(testing::TempDir(), "/check-XXXXXX");
    root_ = mkdtemp(pattern.data());
    ASSERT_TRUE(WriteFileAtomic(root_ + "/a.txt", "alpha\n", 0644).ok());
    ASSERT_TRUE(WriteFileAtomic(root_ + "/d/b.txt", "bravo\n", 0755).ok());
    manifest_ = *BuildManifest(root_, {});
    record_ = root_ + "/.fleetplan/manifest.checked";
  }

  // Makes every file look older than the racy window, as after a pause.
  void Age() {
    for (const char* file : {"/a.txt", "/d/b.txt"}) {
      struct utimbuf old {1000000000, 1000000000};
      ASSERT_EQ(utime((root_ + file).c_str(), &old), 0);
    }
  }

  std::string root_, record_;
  Manifest manifest_;
};

TEST_F(TreeCheckTest, ATreeAsListedPassesWithAndWithoutARecord) {
  EXPECT_THAT(CheckTree(root_, manifest_, ""), IsEmpty());
  EXPECT_THAT(CheckTree(root_, manifest_, record_), IsEmpty());
  EXPECT_THAT(CheckTree(root_, manifest_, record_), IsEmpty());
}

// Folders in and out of each other in the manifest's order (d/b.txt,
// d/e/c.txt, d/f.txt): each file is found in its own folder, and a file
// whose folder went, or became a link to another, is a mismatch.
TEST_F(TreeCheckTest, FilesAreFoundInTheirOwnFoldersWhateverTheOrder) {
  ASSERT_TRUE(WriteFileAtomic(root_ + "/d/e/c.txt", "charlie\n", 0644).ok());
  ASSERT_TRUE(WriteFileAtomic(root_ + "/d/f.txt", "foxtrot\n", 0644).ok());
  ASSERT_TRUE(WriteFileAtomic(root_ + "/g/f.txt", "golf\n", 0644).ok());
  manifest_ = *BuildManifest(root_, {});
  EXPECT_THAT(CheckTree(root_, manifest_, ""), IsEmpty());
  ASSERT_EQ(std::system(("rm -rf " + root_ + "/d/e").c_str()), 0);
  ASSERT_EQ(std::system(("rm -rf " + root_ + "/g && ln -s d " + root_ + "/g").c_str()), 0);
  EXPECT_THAT(CheckTree(root_, manifest_, ""), ElementsAre("d/e/c.txt", "g/f.txt"));
  EXPECT_THAT(CheckTree(root_ + "/gone", manifest_, ""), ::testing::SizeIs(5));
}

TEST_F(TreeCheckTest, AnEditWithTheSameSizeIsFoundAfterARecordedPass) {
  ASSERT_THAT(CheckTree(root_, manifest_, record_), IsEmpty());
  ASSERT_TRUE(WriteFileAtomic(root_ + "/a.txt", "ALPHA\n", 0644).ok());
  EXPECT_THAT(CheckTree(root_, manifest_, record_), ElementsAre("a.txt"));
}

TEST_F(TreeCheckTest, AnEditInPlaceWithTheOldTimesRestoredIsStillFoundByItsChangeTime) {
  // utime cannot set ctime: the record's change time catches the edit.
  Age();
  ASSERT_THAT(CheckTree(root_, manifest_, record_), IsEmpty());
  std::string path = root_ + "/a.txt";
  FILE* file = std::fopen(path.c_str(), "r+");
  std::fputs("ALPHA", file);
  std::fclose(file);
  struct utimbuf old {1000000000, 1000000000};
  ASSERT_EQ(utime(path.c_str(), &old), 0);
  EXPECT_THAT(CheckTree(root_, manifest_, record_), ElementsAre("a.txt"));
}

TEST_F(TreeCheckTest, AFailedCheckLeavesNoRecordToTrust) {
  ASSERT_TRUE(WriteFileAtomic(root_ + "/d/b.txt", "other\n", 0755).ok());
  EXPECT_THAT(CheckTree(root_, manifest_, record_), ElementsAre("d/b.txt"));
  EXPECT_EQ(*ReadFileToString(record_), "");
}

TEST_F(TreeCheckTest, AModeChangeIsFoundWithoutReading) {
  ASSERT_THAT(CheckTree(root_, manifest_, record_), IsEmpty());
  ASSERT_EQ(chmod((root_ + "/d/b.txt").c_str(), 0700), 0);
  EXPECT_THAT(CheckTree(root_, manifest_, record_), ElementsAre("d/b.txt"));
}

// A record for a.txt as stat sees it now, claiming `digest`, written at
// `written_ns`.
std::string RecordFor(const std::string& path, const std::string& digest, int64_t written_ns) {
  struct stat st;
  stat(path.c_str(), &st);
  auto ns = [](const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; };
  return absl::StrCat("fleetplan-checked 1 ", written_ns, "\n", st.st_size, " ", st.st_mode & 07777,
                      " ", ns(st.st_mtim), " ", ns(st.st_ctim), " ", st.st_ino, " ", digest,
                      " a.txt\n");
}

TEST_F(TreeCheckTest, AFileTheRecordSaysMatchedSinceIsNotReadAgainUnlessTooRecent) {
  // A listing whose digest the bytes do not have: only a read finds it.
  Manifest listed = manifest_;
  listed.entries.erase(listed.entries.begin() + 1);
  listed.entries[0].digest = "0123456789abcdef";
  struct stat st;
  ASSERT_EQ(stat((root_ + "/a.txt").c_str(), &st), 0);
  int64_t changed_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  EXPECT_THAT(CheckTree(root_, listed, ""), ElementsAre("a.txt"));

  // Recorded as matched well after its last change: trusted, not read.
  ASSERT_TRUE(WriteFileAtomic(record_, RecordFor(root_ + "/a.txt", "0123456789abcdef",
                                                 changed_ns + 10000000000),
                              0644).ok());
  EXPECT_THAT(CheckTree(root_, listed, record_), IsEmpty());

  // Recorded too soon after its last change to tell: read again.
  ASSERT_TRUE(WriteFileAtomic(record_, RecordFor(root_ + "/a.txt", "0123456789abcdef",
                                                 changed_ns + 1000000000),
                              0644).ok());
  EXPECT_THAT(CheckTree(root_, listed, record_), ElementsAre("a.txt"));
}

}  // namespace
}  // namespace fleetplan
