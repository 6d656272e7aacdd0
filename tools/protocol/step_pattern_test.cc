#include "tools/protocol/step_pattern.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

TEST(StepPatternTest, TheFirstGroupIsTheStep) {
  FP_ASSERT_OK_AND_ASSIGN(StepPattern pattern, StepPattern::Make("step (\\d+)"));
  EXPECT_THAT(pattern.StepOf("epoch 1 step 300 loss 0.5"), Optional(int64_t{300}));
  EXPECT_THAT(pattern.StepOf("step 7"), Optional(int64_t{7}));
  EXPECT_EQ(pattern.StepOf("no steps here"), std::nullopt);
  EXPECT_EQ(pattern.StepOf("steps 300"), std::nullopt);
}

TEST(StepPatternTest, TqdmsCountsAreAPatternAway) {
  FP_ASSERT_OK_AND_ASSIGN(StepPattern pattern, StepPattern::Make("\\| *(\\d+)/\\d+ \\["));
  EXPECT_THAT(pattern.StepOf(" 45%|####5     | 450/1000 [00:12<00:15, 36.1it/s]"),
              Optional(int64_t{450}));
}

TEST(StepPatternTest, AGroupThatIsNoWholeNumberIsNoStep) {
  FP_ASSERT_OK_AND_ASSIGN(StepPattern pattern, StepPattern::Make("step (\\S+)"));
  EXPECT_EQ(pattern.StepOf("step three"), std::nullopt);
  EXPECT_EQ(pattern.StepOf("step 99999999999999999999999"), std::nullopt);
  EXPECT_THAT(pattern.StepOf("step 12"), Optional(int64_t{12}));
}

TEST(StepPatternTest, TheTrainersMetricLinesCountWithOrWithoutAPattern) {
  FP_ASSERT_OK_AND_ASSIGN(StepPattern none, StepPattern::Make(""));
  EXPECT_THAT(none.StepOf(R"({"epoch":0,"event":"step","loss":0.7,"step":300})"),
              Optional(int64_t{300}));
  EXPECT_EQ(none.StepOf("step 300"), std::nullopt);
  FP_ASSERT_OK_AND_ASSIGN(StepPattern pattern, StepPattern::Make("it (\\d+)"));
  EXPECT_THAT(pattern.StepOf(R"({"event":"step","step":301})"), Optional(int64_t{301}));
}

TEST(StepPatternTest, ABadPatternSaysWhy) {
  EXPECT_THAT(StepPattern::Make("step (\\d+"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("missing )")));
  EXPECT_THAT(StepPattern::Make("step \\d+"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no capturing group")));
  EXPECT_EQ(ProgressPatternError("step (\\d+)"), "");
}

}  // namespace
}  // namespace fleetplan
