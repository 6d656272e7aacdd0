#include "tools/process/exec_args.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;

TEST(MergeEnvTest, OverridesReplaceOrAddKeysAndComeLast) {
  EXPECT_THAT(MergeEnv({"A=1", "B=2", "C=3"}, {{"B", "x"}, {"D", "y"}}),
              ElementsAre("A=1", "C=3", "B=x", "D=y"));
}

TEST(MergeEnvTest, OfAKeyGivenTwiceTheLastWins) {
  EXPECT_THAT(MergeEnv({"X=0"}, {{"X", "first"}, {"Y", "y"}, {"X", "second"}}),
              ElementsAre("Y=y", "X=second"));
}

TEST(MergeEnvTest, ValuesAreTakenAsTheyAre) {
  EXPECT_THAT(MergeEnv({"ODD", "E=a=b"}, {{"V", "$(c) \"q\""}}),
              ElementsAre("ODD", "E=a=b", "V=$(c) \"q\""));
  EXPECT_THAT(MergeEnv({"ODD"}, {{"ODD", "set"}}), ElementsAre("ODD=set"));
}

TEST(SearchPathTest, TheLastPathOrTheDefault) {
  EXPECT_EQ(SearchPath({"HOME=/root"}), "/usr/local/bin:/usr/bin:/bin");
  EXPECT_EQ(SearchPath({"PATH=/a", "PATHS=/no", "PATH=/b:/c"}), "/b:/c");
  EXPECT_EQ(SearchPath({"PATH="}), "");
}

TEST(NullTerminatedTest, PointsAtEachStringThenNull) {
  std::vector<std::string> args = {"prog", "", "a b"};
  std::vector<char*> argv = NullTerminated(args);
  ASSERT_EQ(argv.size(), 4u);
  EXPECT_STREQ(argv[0], "prog");
  EXPECT_STREQ(argv[1], "");
  EXPECT_STREQ(argv[2], "a b");
  EXPECT_EQ(argv[3], nullptr);
  EXPECT_EQ(NullTerminated({}), std::vector<char*>{nullptr});
}

}  // namespace
}  // namespace fleetplan
