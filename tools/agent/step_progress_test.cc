#include "tools/agent/step_progress.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Optional;

const absl::Time kStart = absl::FromUnixSeconds(1700000000);

absl::Time At(double seconds) { return kStart + absl::Seconds(seconds); }

StepProgress Progress(const std::string& regex, const std::string& path = "/nonexistent/p") {
  absl::StatusOr<StepPattern> pattern = StepPattern::Make(regex);
  EXPECT_THAT(pattern, IsOk());
  return StepProgress(*pattern, path, 2, 4, 2);
}

TEST(StepRateTest, StepsOverTheLastThirtySeconds) {
  std::vector<StepPoint> points;
  for (int s = 0; s <= 60; s += 2) AddStepPoint(&points, {At(s), s * 10});
  // 10 steps a second all along: from the point 30 s before the end.
  EXPECT_THAT(StepRate(points, At(60)), Optional(DoubleNear(10.0, 1e-9)));
  // Nothing since: the rate falls as the end moves on.
  EXPECT_THAT(StepRate(points, At(90)), Optional(DoubleNear(0.0, 1e-9)));
  // From the point at 44 s, the last at or before 75 - 30.
  EXPECT_THAT(StepRate(points, At(75)), Optional(DoubleNear((600.0 - 440) / 31, 1e-9)));
}

TEST(StepRateTest, TooFewPointsOrACounterThatWentDownHaveNoRate) {
  EXPECT_EQ(StepRate({}, At(5)), std::nullopt);
  EXPECT_EQ(StepRate({{At(0), 10}}, At(5)), std::nullopt);
  EXPECT_EQ(StepRate({{At(0), 400}, {At(2), 3}}, At(3)), std::nullopt);
  // Young: from the first point.
  EXPECT_THAT(StepRate({{At(0), 0}, {At(2), 8}}, At(4)), Optional(DoubleNear(2.0, 1e-9)));
}

TEST(StepRateTest, PointsStayASecondApartAndOldOnesGo) {
  std::vector<StepPoint> points;
  for (int i = 0; i < 50; ++i) AddStepPoint(&points, {At(i * 0.1), i});
  // 5 s of a step every 100 ms: one point per second, the last the latest.
  EXPECT_EQ(points.front(), (StepPoint{At(0), 0}));
  EXPECT_EQ(points.back(), (StepPoint{At(4.9), 49}));
  EXPECT_LE(points.size(), 7u);
  for (int i = 50; i < 1000; ++i) AddStepPoint(&points, {At(i * 0.1), i});
  // 100 s in: what is left starts at or just before the window.
  EXPECT_LE(points.front().at, At(99.9) - kStepRateWindow);
  EXPECT_GT(points[1].at, At(99.9) - kStepRateWindow);
  EXPECT_LE(points.size(), 33u);
  for (size_t i = 1; i + 1 < points.size(); ++i) {
    EXPECT_GE(points[i].at - points[i - 1].at, absl::Seconds(1)) << i;
  }
}

TEST(StepProgressTest, LinesAreFoundAcrossChunks) {
  StepProgress progress = Progress("step (\\d+)");
  progress.Feed(0, "loading\nstep 1", At(0));
  EXPECT_TRUE(progress.record().ranks[0].points.empty()) << "the line has not ended";
  progress.Feed(0, "2 done\n", At(1));
  progress.Feed(1, "step 7\r step 8\r", At(1));
  EXPECT_THAT(progress.record().ranks[0].points, ElementsAre(StepPoint{At(1), 12}));
  EXPECT_THAT(progress.record().ranks[1].points,
              ElementsAre(StepPoint{At(1), 7}, StepPoint{At(1), 8}));
  EXPECT_EQ(progress.record().ranks[0].rank, 4);
  EXPECT_EQ(progress.record().ranks[1].rank, 5);
  progress.Feed(1, R"({"event":"step","step":900})" "\n", At(3));
  EXPECT_EQ(progress.record().ranks[1].points.back().step, 900);
  progress.Feed(7, "step 3\n", At(3));  // no such rank: ignored
}

TEST(StepProgressTest, AnOverlongLineIsSkippedToItsEnd) {
  StepProgress progress = Progress("step (\\d+)");
  progress.Feed(0, "step 5" + std::string(70 * 1024, 'x'), At(0));
  progress.Feed(0, "step 6\nstep 9\n", At(1));
  EXPECT_THAT(progress.record().ranks[0].points, ElementsAre(StepPoint{At(1), 9}));
}

TEST(StepProgressTest, TheFileIsWrittenWhenAStepCameAtMostEverySecond) {
  std::string dir = MakeTempDir();
  std::string path = ProgressPath(dir);
  StepProgress progress = Progress("step (\\d+)", path);
  ASSERT_THAT(progress.MaybeWrite(At(0)), IsOk());
  EXPECT_THAT(ReadFileToString(path), StatusIs(absl::StatusCode::kNotFound)) << "no step yet";
  progress.Feed(0, "step 1\n", At(0));
  ASSERT_THAT(progress.MaybeWrite(At(0)), IsOk());
  FP_ASSERT_OK_AND_ASSIGN(std::string first, ReadFileToString(path));
  progress.Feed(0, "step 2\n", At(0.5));
  ASSERT_THAT(progress.MaybeWrite(At(0.5)), IsOk());
  EXPECT_THAT(ReadFileToString(path), IsOkAndHolds(first)) << "within the second";
  ASSERT_THAT(progress.MaybeWrite(At(1.1)), IsOk());
  FP_ASSERT_OK_AND_ASSIGN(std::string second, ReadFileToString(path));
  FP_ASSERT_OK_AND_ASSIGN(ProgressRecord read, ProgressRecordFromJson(second));
  EXPECT_EQ(read.generation, 2);
  EXPECT_LT(absl::AbsDuration(read.written - At(1.1)), absl::Microseconds(1));
  EXPECT_EQ(read.ranks[0].points.back().step, 2);
  // No step since: rewritten every 5 s, so that the rate falls.
  ASSERT_THAT(progress.MaybeWrite(At(4)), IsOk());
  EXPECT_THAT(ReadFileToString(path), IsOkAndHolds(second));
  ASSERT_THAT(progress.MaybeWrite(At(6.2)), IsOk());
  FP_ASSERT_OK_AND_ASSIGN(ProgressRecord later,
                          ProgressRecordFromJson(ReadFileToString(path).value_or("")));
  EXPECT_LT(absl::AbsDuration(later.written - At(6.2)), absl::Microseconds(1));
}

TEST(StepProgressTest, AFileThatCannotBeWrittenIsSaidOnce) {
  StepProgress progress = Progress("step (\\d+)", "/nonexistent/dir/progress.json");
  progress.Feed(0, "step 1\n", At(0));
  EXPECT_FALSE(progress.MaybeWrite(At(0)).ok());
  progress.Feed(0, "step 2\n", At(3));
  EXPECT_THAT(progress.MaybeWrite(At(3)), IsOk());
}

TEST(ProgressRecordTest, ABrokenFileIsNamed) {
  EXPECT_THAT(ProgressRecordFromJson("{}"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ProgressRecordFromJson(R"({"generation":0,"written":1,"ranks":[{"rank":0,)"
                                     R"("points":[[1,"x"]]}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fleetplan
