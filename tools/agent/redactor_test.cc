#include "tools/agent/redactor.h"

#include <stdlib.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;

// Everything `redactor` writes for `chunks`, flushed at the end.
std::string Through(Redactor& redactor, const std::vector<std::string>& chunks) {
  std::string out;
  for (const std::string& chunk : chunks) out += redactor.Feed(chunk);
  return out + redactor.Flush();
}

TEST(RedactorTest, ReplacesEveryOccurrence) {
  Redactor redactor({"hunter2"});
  EXPECT_EQ(redactor.Feed("token=hunter2 again hunter2\n"), "token=*** again ***\n");
}

TEST(RedactorTest, AValueSplitAcrossChunksIsHidden) {
  Redactor redactor({"hunter2"});
  EXPECT_EQ(redactor.Feed("key=hun"), "key=") << "the value's beginning is held";
  EXPECT_EQ(redactor.Feed("ter2 ok\n"), "*** ok\n");
  // Split byte by byte.
  Redactor bytes({"s3cr3t"});
  std::vector<std::string> chunks;
  for (char c : std::string("[s3cr3t]\n")) chunks.emplace_back(1, c);
  EXPECT_EQ(Through(bytes, chunks), "[***]\n");
}

TEST(RedactorTest, AHeldBeginningThatIsNoValueComesOutUnchanged) {
  Redactor redactor({"hunter2"});
  EXPECT_EQ(redactor.Feed("hunt"), "");
  EXPECT_EQ(redactor.Feed("ing\n"), "hunting\n");
  EXPECT_EQ(redactor.Feed("ends with hun"), "ends with ");
  EXPECT_EQ(redactor.Flush(), "hun");
}

TEST(RedactorTest, LongestValueFirstAndOverlapsStartAgain) {
  Redactor redactor({"abc", "abcdef", ""});
  EXPECT_EQ(redactor.Feed("abcdef abc ab"), "*** *** ");
  EXPECT_EQ(redactor.Flush(), "ab");
  // A false start inside a value's text: "aab" holds "ab".
  Redactor overlap({"ab"});
  EXPECT_EQ(Through(overlap, {"aa", "b"}), "a***");
}

TEST(RedactorTest, NothingToHidePassesChunksThrough) {
  Redactor redactor({"", ""});
  EXPECT_TRUE(redactor.empty());
  EXPECT_EQ(redactor.Feed("partial"), "partial");
  EXPECT_EQ(redactor.Flush(), "");
}

TEST(RedactorTest, ValuesComeFromTheVariablesTheListNames) {
  setenv("FP_TEST_NAMES", "FP_TEST_A,FP_TEST_MISSING,FP_TEST_B", 1);
  setenv("FP_TEST_A", "alpha", 1);
  setenv("FP_TEST_B", "beta", 1);
  unsetenv("FP_TEST_MISSING");
  EXPECT_THAT(SecretValuesFromEnvironment("FP_TEST_NAMES"), ElementsAre("alpha", "beta"));
  EXPECT_THAT(MissingSecrets("FP_TEST_NAMES"), ElementsAre("FP_TEST_MISSING"));
  unsetenv("FP_TEST_NAMES");
  EXPECT_TRUE(SecretValuesFromEnvironment("FP_TEST_NAMES").empty());
}

}  // namespace
}  // namespace fleetplan
