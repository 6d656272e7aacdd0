#include "tools/secure/job_key.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

TEST(JobKeyTest, EachKeyIsNewAndRoundTripsThroughItsFile) {
  absl::StatusOr<JobKey> a = MakeJobKey();
  absl::StatusOr<JobKey> b = MakeJobKey();
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_NE(a->bytes, b->bytes);
  std::string path = TempDir() + "/key";
  ASSERT_THAT(WriteFileAtomic(path, JobKeyFileText(*a), 0600), IsOk());
  absl::StatusOr<JobKey> read = ReadJobKeyFile(path);
  ASSERT_THAT(read, IsOk());
  EXPECT_EQ(read->bytes, a->bytes);
}

TEST(JobKeyTest, AKeyOthersCanReadIsRefused) {
  std::string path = TempDir() + "/open-key";
  ASSERT_THAT(WriteFileAtomic(path, JobKeyFileText(*MakeJobKey()), 0644), IsOk());
  absl::StatusOr<JobKey> read = ReadJobKeyFile(path);
  EXPECT_THAT(read, StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(std::string(read.status().message()), ::testing::HasSubstr("0644"));
}

TEST(JobKeyTest, MissingAndMalformedKeysSayWhat) {
  EXPECT_THAT(ReadJobKeyFile(TempDir() + "/none"), StatusIs(absl::StatusCode::kNotFound));
  std::string path = TempDir() + "/short-key";
  ASSERT_THAT(WriteFileAtomic(path, "abcd\n", 0600), IsOk());
  EXPECT_THAT(ReadJobKeyFile(path), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseJobKey(std::string(64, 'g')), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(JobKeyTest, KeyedDigestsDependOnTheKey) {
  FP_ASSERT_OK_AND_ASSIGN(std::string digest, KeyedDigestHex("k", "value"));
  EXPECT_EQ(digest.size(), 64u);
  EXPECT_THAT(KeyedDigestHex("k", "value"), IsOkAndHolds(digest));
  EXPECT_THAT(KeyedDigestHex("j", "value"), IsOkAndHolds(::testing::Ne(digest)));
  EXPECT_THAT(KeyedDigestHex("k", "value2"), IsOkAndHolds(::testing::Ne(digest)));
}

TEST(JobKeyTest, KeyedDigestIsHmacSha256) {
  // RFC 4231, test case 2.
  EXPECT_THAT(KeyedDigestHex("Jefe", "what do ya want for nothing?"),
              IsOkAndHolds("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"));
}

}  // namespace
}  // namespace fleetplan
