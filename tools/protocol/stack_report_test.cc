#include "tools/protocol/stack_report.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const StackWhere kBarrier{"main", "train.py", 41, "barrier"};
const StackWhere kShard{"load_shard", "data.py", 88, ""};

RankStack At(int rank, const std::string& node, std::optional<StackWhere> where,
             std::vector<std::string> skips = {}) {
  return RankStack{rank, node, std::move(where), std::move(skips)};
}

TEST(RankRangesTest, RunsOfThreeOrMoreBecomeRanges) {
  EXPECT_EQ(RankRanges({7, 0, 1, 2, 3, 4, 6}), "0-4,6,7");
  EXPECT_EQ(RankRanges({5}), "5");
  EXPECT_EQ(RankRanges({1, 2}), "1,2");
  EXPECT_EQ(RankRanges({3, 3, 9, 10, 11}), "3,9-11");
  EXPECT_EQ(RankRanges({}), "");
}

TEST(GroupStacksTest, GroupsByWhereLargestFirstWithTheirNodes) {
  std::vector<RankStack> ranks = {
      At(5, "c", kShard),    At(0, "a", kBarrier), At(1, "a", kBarrier), At(2, "b", kBarrier),
      At(3, "b", kBarrier),  At(4, "c", kBarrier), At(6, "d", kBarrier), At(7, "d", kBarrier),
  };
  StackSummary summary = GroupStacks(ranks);
  EXPECT_THAT(SummaryLines(summary),
              ElementsAre("ranks 0-4,6,7 on a,b,c,d: main (train.py:41) calling barrier",
                          "rank 5 on c: load_shard (data.py:88)"));
}

TEST(GroupStacksTest, SkipsAreNamedPerNodeAndReasonNeverDropped) {
  std::vector<RankStack> ranks = {
      At(0, "a", kBarrier),
      At(1, "b", std::nullopt, {"py-bt: gdb was not found on PATH", "native: eu-stack was not found on PATH"}),
      At(2, "b", std::nullopt, {"py-bt: gdb was not found on PATH", "native: eu-stack was not found on PATH"}),
  };
  EXPECT_THAT(SummaryLines(GroupStacks(ranks)),
              ElementsAre("ranks 1,2 on b: no frame of the user's found",
                          "rank 0 on a: main (train.py:41) calling barrier",
                          "skip on b (ranks 1,2): native: eu-stack was not found on PATH",
                          "skip on b (ranks 1,2): py-bt: gdb was not found on PATH"));
}

TEST(StackReportJsonTest, RankStackRoundTrips) {
  RankStack rank = At(3, "b", kBarrier, {"native: ptrace refused"});
  FP_ASSERT_OK_AND_ASSIGN(RankStack back, RankStackFromJson(RankStackToJson(rank), "m"));
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.node, "b");
  EXPECT_EQ(back.where, kBarrier);
  EXPECT_THAT(back.skips, ElementsAre("native: ptrace refused"));
  FP_ASSERT_OK_AND_ASSIGN(RankStack none, RankStackFromJson(RankStackToJson(At(1, "a", {})), "m"));
  EXPECT_FALSE(none.where.has_value());
}

TEST(StackReportJsonTest, SummaryRoundTripsToTheSameLines) {
  StackSummary summary = GroupStacks({At(0, "a", kBarrier), At(1, "b", kShard, {"py-bt: x"})});
  FP_ASSERT_OK_AND_ASSIGN(StackSummary back,
                          StackSummaryFromJson(StackSummaryToJson(summary), "job.json"));
  EXPECT_EQ(SummaryLines(back), SummaryLines(summary));
}

TEST(StackReportJsonTest, RefusesWrongFields) {
  EXPECT_THAT(RankStackFromJson(nlohmann::json::parse(R"({"rank":-1,"node":"a","where":null,"skips":[]})"), "m"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rank")));
  EXPECT_THAT(RankStackFromJson(nlohmann::json::parse(R"({"rank":1,"node":"a","where":3,"skips":[]})"), "m"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("where")));
  EXPECT_THAT(RankStackFromJson(nlohmann::json::parse(R"({"rank":1,"node":"a","where":null,"skips":[1]})"), "m"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("skips")));
  EXPECT_THAT(StackSummaryFromJson(nlohmann::json::parse(R"({"groups":[{"where":null,"ranks":[],"nodes":[]}],"skips":[]})"), "m"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ranks")));
  EXPECT_THAT(StackSummaryFromJson(nlohmann::json::parse(R"({"groups":[]})"), "m"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("skips")));
}

}  // namespace
}  // namespace fleetplan
