#include "trainer/lr_schedule.h"

#include "gtest/gtest.h"

namespace fleetplan::trainer {
namespace {

TEST(LrScheduleTest, WarmsUpLinearlyToTheScaledRate) {
  LrSchedule s{0.1, 4, 1000, 100};
  EXPECT_DOUBLE_EQ(LearningRate(s, 0), 0.1);
  EXPECT_DOUBLE_EQ(LearningRate(s, 50), 0.25);
  EXPECT_DOUBLE_EQ(LearningRate(s, 100), 0.4);
}

TEST(LrScheduleTest, DecaysAlongACosineToZero) {
  LrSchedule s{0.1, 4, 1000, 100};
  EXPECT_NEAR(LearningRate(s, 550), 0.2, 1e-12);
  EXPECT_NEAR(LearningRate(s, 1000), 0.0, 1e-12);
  EXPECT_GT(LearningRate(s, 999), 0.0);
  EXPECT_LT(LearningRate(s, 600), LearningRate(s, 500));
}

TEST(LrScheduleTest, SingleRankWithoutWarmupStartsAtTheBaseRate) {
  LrSchedule s{0.03, 1, 10, 0};
  EXPECT_DOUBLE_EQ(LearningRate(s, 0), 0.03);
}

}  // namespace
}  // namespace fleetplan::trainer
