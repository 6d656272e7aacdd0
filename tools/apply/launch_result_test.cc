#include "tools/apply/launch_result.h"

#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

TEST(LaunchResultTest, ParsesTheAgentsResult) {
  FP_ASSERT_OK_AND_ASSIGN(
      NodeResult result,
      ParseNodeResult(R"({"node":"b","status":1,"failed_rank":3,"restarts":2,"run_id":"x"})"));
  EXPECT_EQ(result.node, "b");
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.failed_rank, 3);
  EXPECT_EQ(result.restarts, 2);
  EXPECT_EQ(result.run_id, "x");
  FP_ASSERT_OK_AND_ASSIGN(NodeResult no_rank,
                          ParseNodeResult(R"({"node":"a","status":143,"failed_rank":null})"));
  EXPECT_FALSE(no_rank.failed_rank.has_value());
  EXPECT_THAT(ParseNodeResult("not json"),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("result")));
}

TEST(LaunchResultTest, LowestFailedRankWins) {
  std::vector<NodeResult> results = {{"a", 0, std::nullopt, 0, ""},
                                     {"c", 143, std::nullopt, 0, ""},
                                     {"d", 2, 6, 0, ""},
                                     {"b", 1, 3, 0, ""}};
  std::optional<NodeResult> first = FirstFailure(results);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(DescribeFailure(*first), "rank 3 on node 'b' failed with exit status 1");
  EXPECT_EQ(DescribeFailure(results[1]), "node 'c' failed with exit status 143");
  EXPECT_FALSE(FirstFailure({{"a", 0, std::nullopt, 0, ""}}).has_value());
}

TEST(LaunchResultTest, ResultPathIsUnderTheNodesLogs) {
  NodeSpec node;
  node.name = "b";
  node.workdir = "/w/";
  EXPECT_EQ(ResultJsonPath(node), "/w/.fleetplan/nodes/b/logs/result.json");
}

}  // namespace
}  // namespace fleetplan
