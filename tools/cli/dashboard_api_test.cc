#include "tools/cli/dashboard_api.h"

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace fleetplan {
namespace {

constexpr char kToken[] = "0123456789abcdef0123456789abcdef";

TEST(DashboardApiTest, TokensAreFreshHexOf32Bytes) {
  absl::StatusOr<std::string> first = NewDashboardToken();
  absl::StatusOr<std::string> second = NewDashboardToken();
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->size(), 64u);
  EXPECT_EQ(first->find_first_not_of("0123456789abcdef"), std::string::npos) << *first;
  EXPECT_NE(*first, *second);
}

TEST(DashboardApiTest, OnlyTheSameTokenMatches) {
  EXPECT_TRUE(TokenMatches(kToken, kToken));
  EXPECT_FALSE(TokenMatches(kToken, ""));
  EXPECT_FALSE(TokenMatches(kToken, "0123456789abcdef0123456789abcdee"));  // last byte
  EXPECT_FALSE(TokenMatches(kToken, "0123456789abcdef"));                  // a prefix
  EXPECT_FALSE(TokenMatches(kToken, std::string(kToken) + "0"));
  EXPECT_FALSE(TokenMatches("", ""));  // no token set: nothing matches
}

TEST(DashboardApiTest, OnlyTheLoopbackAddressAndPortAreAHost) {
  EXPECT_TRUE(HostAllowed("127.0.0.1:8421", 8421));
  EXPECT_TRUE(HostAllowed("localhost:8421", 8421));
  EXPECT_TRUE(HostAllowed("LocalHost:8421", 8421));
  EXPECT_FALSE(HostAllowed("127.0.0.1:8422", 8421));
  EXPECT_FALSE(HostAllowed("127.0.0.1", 8421));
  EXPECT_FALSE(HostAllowed("evil.example:8421", 8421));  // DNS rebinding
  EXPECT_FALSE(HostAllowed("127.0.0.1.evil.example:8421", 8421));
  EXPECT_FALSE(HostAllowed("", 8421));
}

TEST(DashboardApiTest, RequestsNeedTheHostThenTheToken) {
  EXPECT_EQ(CheckRequest("127.0.0.1:80", kToken, kToken, 80), std::nullopt);
  std::optional<Refusal> host = CheckRequest("rebound.example:80", kToken, kToken, 80);
  ASSERT_TRUE(host.has_value());
  EXPECT_EQ(host->status, 403);
  EXPECT_EQ(host->message, "Host must be 127.0.0.1:80");
  std::optional<Refusal> token = CheckRequest("127.0.0.1:80", "", kToken, 80);
  ASSERT_TRUE(token.has_value());
  EXPECT_EQ(token->status, 403);
}

TEST(DashboardApiTest, LogFiltersFromTheQuery) {
  absl::StatusOr<LogFilter> all = ParseLogFilter("", "", "");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->node, "");
  EXPECT_EQ(all->rank, std::nullopt);
  EXPECT_EQ(all->since, 0u);
  absl::StatusOr<LogFilter> one = ParseLogFilter("b", "3", "17");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->node, "b");
  EXPECT_EQ(one->rank, 3);
  EXPECT_EQ(one->since, 17u);
  EXPECT_EQ(ParseLogFilter("", "x", "").status().message(), "rank: not a rank: 'x'");
  EXPECT_EQ(ParseLogFilter("", "-1", "").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseSince("-3").status().message(), "since: not a sequence number: '-3'");
}

// Two ranks of node a; rank 1 restarts once.
void TwoRanksOneRestart(RunOutput& output) {
  output.Reset("run-1");
  output.Add("a", R"([a/0] {"event":"step","epoch":0,"step":10,"loss":0.9,"samples_per_sec":100})");
  output.Add("a", R"([a/1] {"event":"step","epoch":0,"step":10,"loss":0.8})");
  output.Add("a", "[a/1] Traceback (most recent call last):");
  output.Add("a", "[a/1] --- restart 1 of 3 (rank 1 exited with status 1) ---");
  output.Add("a", R"([a/1] {"event":"step","epoch":0,"step":10,"loss":0.85})");
  output.Add("a", R"([a/0] {"event":"epoch","epoch":0,"step":20,"loss":0.5})");  // not a point
  output.Add("a", "fleetplan-agent: the agent's own line");
}

TEST(DashboardApiTest, MetricPointsPerRankWithTheirGeneration) {
  RunOutput output;
  TwoRanksOneRestart(output);
  nlohmann::json metrics = output.MetricsJson(0);
  EXPECT_EQ(metrics["run_id"], "run-1");
  EXPECT_EQ(metrics["next"], 7);
  ASSERT_EQ(metrics["points"].size(), 3u) << metrics.dump();
  EXPECT_EQ(metrics["points"][0],
            nlohmann::json::parse(R"({"seq":1,"node":"a","rank":0,"generation":0,"step":10,)"
                                  R"("loss":0.9,"samples_per_sec":100.0})"));
  EXPECT_EQ(metrics["points"][1]["samples_per_sec"], nullptr);
  EXPECT_EQ(metrics["points"][1]["generation"], 0);
  EXPECT_EQ(metrics["points"][2]["rank"], 1);
  EXPECT_EQ(metrics["points"][2]["generation"], 1);
  ASSERT_EQ(metrics["restarts"].size(), 1u);
  EXPECT_EQ(metrics["restarts"][0]["generation"], 1);
  EXPECT_EQ(metrics["restarts"][0]["seq"], 4);
  // Since: only what came after.
  nlohmann::json later = output.MetricsJson(4);
  ASSERT_EQ(later["points"].size(), 1u);
  EXPECT_EQ(later["points"][0]["seq"], 5);
  EXPECT_TRUE(later["restarts"].empty());
  EXPECT_TRUE(output.MetricsJson(7)["points"].empty());
}

TEST(DashboardApiTest, ANewRunStartsAfresh) {
  RunOutput output;
  TwoRanksOneRestart(output);
  output.Reset("run-2");
  output.Add("a", R"([a/1] {"event":"step","step":1,"loss":1.0})");
  nlohmann::json metrics = output.MetricsJson(0);
  EXPECT_EQ(metrics["run_id"], "run-2");
  ASSERT_EQ(metrics["points"].size(), 1u);
  EXPECT_EQ(metrics["points"][0]["generation"], 0);  // the old run's restart is forgotten
  EXPECT_EQ(metrics["points"][0]["seq"], 8);          // numbers go on
}

TEST(DashboardApiTest, LogsFilteredByNodeAndRankMetricLinesForPeople) {
  RunOutput output;
  TwoRanksOneRestart(output);
  output.Add("b", "[b/2] hello from b");
  LogFilter filter;
  filter.node = "a";
  filter.rank = 1;
  nlohmann::json logs = output.LogsJson(filter);
  ASSERT_EQ(logs["lines"].size(), 4u) << logs.dump();
  EXPECT_EQ(logs["lines"][0]["line"], "epoch 1 step 10 loss 0.800");
  EXPECT_EQ(logs["lines"][1]["line"], "Traceback (most recent call last):");
  EXPECT_EQ(logs["lines"][1]["rank"], 1);
  filter = LogFilter();
  filter.node = "b";
  logs = output.LogsJson(filter);
  ASSERT_EQ(logs["lines"].size(), 1u);
  EXPECT_EQ(logs["lines"][0]["line"], "hello from b");
  // Every node and rank, the agent's own lines among them; the last N.
  filter = LogFilter();
  filter.limit = 2;
  logs = output.LogsJson(filter);
  ASSERT_EQ(logs["lines"].size(), 2u);
  EXPECT_EQ(logs["lines"][0]["rank"], nullptr);
  EXPECT_EQ(logs["lines"][0]["line"], "fleetplan-agent: the agent's own line");
  filter.since = 7;
  EXPECT_EQ(output.LogsJson(filter)["lines"].size(), 1u);
}

TEST(DashboardApiTest, OldLinesGoPastTheLimit) {
  RunOutput output(2);
  for (int i = 0; i < 5; ++i) output.Add("a", "[a/0] line");
  nlohmann::json logs = output.LogsJson(LogFilter());
  ASSERT_EQ(logs["lines"].size(), 2u);
  EXPECT_EQ(logs["lines"][0]["seq"], 4);
}

TEST(DashboardApiTest, TopPageHasTheReportStragglersAndUnreadNodes) {
  TopView view;
  view.report.state = "running";
  view.report.run_id = "run-1";
  view.report.nodes.resize(2);
  view.report.nodes[0].name = "a";
  view.report.nodes[1].name = "b";
  view.unread["b"] = "connection refused";
  nlohmann::json page = TopPageJson(view);
  EXPECT_EQ(page["report"]["state"], "running");
  ASSERT_EQ(page["report"]["nodes"].size(), 2u);
  EXPECT_EQ(page["report"]["nodes"][0]["name"], "a");
  EXPECT_EQ(page["unread"]["b"], "connection refused");
  EXPECT_TRUE(page["stragglers"].is_array());
}

}  // namespace
}  // namespace fleetplan
