#include "tools/protocol/metric_line.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

using ::testing::Optional;

TEST(MetricLineTest, AStepReadsAsEpochStepLossAndThroughput) {
  EXPECT_THAT(HumanMetricLine(R"([a/0] {"epoch":0,"epochs":2,"event":"step","loss":0.34812,)"
                              R"("rank":0,"samples_per_sec":5450.7,"step":300,)"
                              R"("steps_per_epoch":469,"world_size":4})"),
              Optional(std::string("[a/0] epoch 1/2 step 300/469 loss 0.348 5,450 samples/s")));
  // The second epoch counts its steps from its start.
  EXPECT_THAT(HumanMetricLine(R"([a/0] {"epoch":1,"epochs":2,"event":"step","step":500,)"
                              R"("steps_per_epoch":469})"),
              Optional(std::string("[a/0] epoch 2/2 step 31/469")));
}

TEST(MetricLineTest, AnEpochAndTheEndSayTheResult) {
  EXPECT_THAT(HumanMetricLine(R"([b/2] {"epoch":0,"epochs":1,"event":"epoch","loss":0.5,)"
                              R"("test_accuracy":0.8881,"samples_per_sec":5412.2,"step":469})"),
              Optional(std::string(
                  "[b/2] epoch 1/1 ended: loss 0.500, test accuracy 0.888, 5,412 samples/s")));
  EXPECT_THAT(HumanMetricLine(R"([a/0] {"epoch":0,"event":"done","seconds":41.2,)"
                              R"("test_accuracy":0.888,"step":469})"),
              Optional(std::string("[a/0] test accuracy 0.888 after 1 epoch, 41s")));
}

TEST(MetricLineTest, OtherLinesAreLeftAsTheyAre) {
  EXPECT_EQ(HumanMetricLine("[a/0] Traceback (most recent call last):"), std::nullopt);
  EXPECT_EQ(HumanMetricLine(R"([a/0] {"event":"unknown-kind"})"), std::nullopt);
  EXPECT_EQ(HumanMetricLine(R"([a/0] {"event":"step","loss":"high"})"), std::nullopt);
  EXPECT_EQ(HumanMetricLine(R"([a/0] {"event":)"), std::nullopt);
  EXPECT_EQ(HumanMetricLine(R"({"no":"event"})"), std::nullopt);
}

TEST(MetricLineTest, TheStepOfAMetricEvent) {
  EXPECT_THAT(MetricLineStep(R"({"epoch":1,"epochs":2,"event":"step","loss":0.3,"step":500,)"
                             R"("steps_per_epoch":469})"),
              Optional(int64_t{500}));
  EXPECT_THAT(MetricLineStep(R"({"event":"epoch","step":938})" "\n"), Optional(int64_t{938}));
  EXPECT_EQ(MetricLineStep("step 500"), std::nullopt);
  EXPECT_EQ(MetricLineStep(R"({"event":"step","step":"500"})"), std::nullopt);
  EXPECT_EQ(MetricLineStep(R"({"step":500})"), std::nullopt);  // no event: not the trainer's
  EXPECT_EQ(MetricLineStep(R"({"event":"step","step":5)"), std::nullopt);
  EXPECT_EQ(MetricLineStep(R"({"event":"step","loss":0.3})"), std::nullopt);
}

TEST(MetricLineTest, TheFiguresOfAMetricEvent) {
  std::optional<MetricEvent> event = ParseMetricEvent(
      R"({"epoch":1,"event":"step","loss":0.25,"samples_per_sec":5450.5,"step":500})");
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->event, "step");
  EXPECT_THAT(event->step, Optional(int64_t{500}));
  EXPECT_THAT(event->epoch, Optional(int64_t{1}));
  EXPECT_THAT(event->loss, Optional(0.25));
  EXPECT_THAT(event->samples_per_sec, Optional(5450.5));
  // A figure of another type is absent, not 0.
  event = ParseMetricEvent(R"({"event":"epoch","loss":"high","step":9})");
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->loss, std::nullopt);
  EXPECT_EQ(event->samples_per_sec, std::nullopt);
  EXPECT_EQ(ParseMetricEvent(R"({"loss":0.3})"), std::nullopt);
  EXPECT_EQ(ParseMetricEvent("loss 0.3"), std::nullopt);
}

}  // namespace
}  // namespace fleetplan
