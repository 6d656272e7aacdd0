#include "tools/sync/stat_record.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"

namespace fleetplan {
namespace {

constexpr absl::string_view kHeader = "test-record 1";

class StatRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = absl::StrCat(testing::TempDir(), "/stat-XXXXXX");
    dir_ = mkdtemp(pattern.data());
    file_ = dir_ + "/a.txt";
    record_ = dir_ + "/cache/record";
    ASSERT_TRUE(WriteFileAtomic(file_, "alpha\n", 0644).ok());
  }

  struct stat Stat() const {
    struct stat st {};
    EXPECT_EQ(stat(file_.c_str(), &st), 0);
    return st;
  }

  // The record's text with its written time moved `seconds` later, as if
  // it had been written that long after the file's last change.
  void AgeRecord(int seconds) {
    std::string text = *ReadFileToString(record_);
    size_t end = text.find('\n');
    int64_t written = std::stoll(text.substr(kHeader.size() + 1, end));
    text = absl::StrCat(kHeader, " ", written + seconds * 1'000'000'000LL, text.substr(end));
    ASSERT_TRUE(WriteFileAtomic(record_, text, 0644).ok());
  }

  std::string dir_, file_, record_;
};

TEST_F(StatRecordTest, AFileAsRecordedLongAfterItsLastChangeIsKnown) {
  StatRecord record(kHeader);
  record.Add("a.txt", Stat(), "d1");
  ASSERT_TRUE(record.Write(record_).ok());
  AgeRecord(10);
  StatRecord read = StatRecord::Read(record_, kHeader);
  EXPECT_EQ(read.size(), 1u);
  EXPECT_EQ(read.DigestIfUnchanged("a.txt", Stat()), "d1");
  EXPECT_EQ(read.DigestIfUnchanged("b.txt", Stat()), std::nullopt);
}

TEST_F(StatRecordTest, AChangeTooCloseToTheRecordIsReadAgain) {
  StatRecord record(kHeader);
  record.Add("a.txt", Stat(), "d1");
  ASSERT_TRUE(record.Write(record_).ok());  // written right after the change
  EXPECT_EQ(StatRecord::Read(record_, kHeader).DigestIfUnchanged("a.txt", Stat()),
            std::nullopt);
}

TEST_F(StatRecordTest, AnEditOrAChmodInvalidatesTheEntry) {
  StatRecord record(kHeader);
  record.Add("a.txt", Stat(), "d1");
  ASSERT_TRUE(record.Write(record_).ok());
  AgeRecord(10);
  // Same size, new content: replaced (new inode, times).
  ASSERT_TRUE(WriteFileAtomic(file_, "ALPHA\n", 0644).ok());
  EXPECT_EQ(StatRecord::Read(record_, kHeader).DigestIfUnchanged("a.txt", Stat()),
            std::nullopt);
  record = StatRecord(kHeader);
  record.Add("a.txt", Stat(), "d2");
  ASSERT_TRUE(record.Write(record_).ok());
  AgeRecord(10);
  ASSERT_EQ(chmod(file_.c_str(), 0600), 0);
  EXPECT_EQ(StatRecord::Read(record_, kHeader).DigestIfUnchanged("a.txt", Stat()),
            std::nullopt);
}

TEST_F(StatRecordTest, AForeignMalformedOrMissingRecordIsEmpty) {
  EXPECT_EQ(StatRecord::Read(record_, kHeader).size(), 0u);
  StatRecord record(kHeader);
  record.Add("a.txt", Stat(), "d1");
  ASSERT_TRUE(record.Write(record_).ok());
  EXPECT_EQ(StatRecord::Read(record_, "other-record 1").size(), 0u);
  ASSERT_TRUE(WriteFileAtomic(record_, absl::StrCat(kHeader, " 5\nnot a line\n"), 0644).ok());
  EXPECT_EQ(StatRecord::Read(record_, kHeader).size(), 0u);
}

TEST_F(StatRecordTest, PathsWithSpacesAndNewlinesSurviveTheText) {
  StatRecord record(kHeader);
  record.Add("dir name/with\nnewline", Stat(), "d1");
  ASSERT_TRUE(record.Write(record_).ok());
  AgeRecord(10);
  EXPECT_EQ(StatRecord::Read(record_, kHeader).DigestIfUnchanged("dir name/with\nnewline", Stat()),
            "d1");
}

}  // namespace
}  // namespace fleetplan
