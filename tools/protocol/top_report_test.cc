#include "tools/protocol/top_report.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

TopReport Sample() {
  TopReport report;
  report.state = "running";
  report.run_id = "20250102T030405Z-1234";
  report.generation = 1;
  NodeFigures a;
  a.name = "a";
  a.cpu_percent = 52.5;
  a.memory_bytes = 3ull << 30;
  a.gpus = std::vector<GpuFigures>{{0, 98.0, 10ull << 30, 80ull << 30},
                                    {1, std::nullopt, std::nullopt, 80ull << 30}};
  RankFigures busy;
  busy.rank = 0;
  busy.pid = 4242;
  busy.cpu_percent = 99.5;
  busy.rss_bytes = 1ull << 30;
  busy.last_output_age_s = 0.5;
  busy.step = 1200;
  busy.steps_per_s = 5.5;
  RankFigures quiet;
  quiet.rank = 1;
  quiet.local_rank = 1;
  quiet.state = RankRunState::kNotStarted;
  a.ranks = {busy, quiet};
  NodeFigures b;
  b.name = "b";
  b.gpus.reset();  // nvidia-smi failed
  report.nodes = {a, b};
  return report;
}

TEST(TopReportTest, WhatTheWriterWritesTheParserReadsBack) {
  TopReport report = Sample();
  std::string json = TopReportToJson(report);
  EXPECT_EQ(json.find('\n'), std::string::npos) << "one line";
  FP_ASSERT_OK_AND_ASSIGN(TopReport parsed, TopReportFromJson(json));
  EXPECT_EQ(parsed, report);
  ASSERT_EQ(parsed.nodes.size(), 2u);
  EXPECT_FALSE(parsed.nodes[1].gpus.has_value());
  EXPECT_FALSE(parsed.nodes[0].ranks[1].cpu_percent.has_value());
}

TEST(TopReportTest, TheKeysAreExactlyTheDocumentedOnes) {
  nlohmann::json json = nlohmann::json::parse(TopReportToJson(Sample()));
  auto keys = [](const nlohmann::json& object) {
    std::vector<std::string> names;
    for (const auto& [key, value] : object.items()) names.push_back(key);
    return names;
  };
  using ::testing::UnorderedElementsAre;
  EXPECT_THAT(keys(json), UnorderedElementsAre("state", "run_id", "generation", "nodes"));
  const nlohmann::json& node = json["nodes"][0];
  EXPECT_THAT(keys(node),
              UnorderedElementsAre("name", "cpu_percent", "memory_bytes", "gpus", "ranks"));
  EXPECT_THAT(keys(node["gpus"][0]), UnorderedElementsAre("index", "util_percent",
                                                          "memory_used_bytes",
                                                          "memory_total_bytes"));
  EXPECT_THAT(keys(node["ranks"][0]),
              UnorderedElementsAre("rank", "local_rank", "pid", "state", "cpu_percent",
                                   "rss_bytes", "last_output_age_s", "step", "steps_per_s"));
  // Unknown is null, never 0; no nvidia-smi is an empty list, a failed one null.
  EXPECT_TRUE(node["gpus"][1]["util_percent"].is_null());
  EXPECT_TRUE(node["ranks"][1]["cpu_percent"].is_null());
  EXPECT_EQ(node["ranks"][1]["state"], "not started");
  EXPECT_TRUE(json["nodes"][1]["gpus"].is_null());
  EXPECT_EQ(node["ranks"][0]["rss_bytes"], 1ull << 30);
}

TEST(TopReportTest, FiguresAreRoundedToWhatAReaderUses) {
  TopReport report;
  NodeFigures node{"a"};
  node.cpu_percent = 12.345;
  RankFigures rank;
  rank.steps_per_s = 0.12345;
  rank.last_output_age_s = 75.04;
  node.ranks = {rank};
  report.nodes = {node};
  nlohmann::json json = nlohmann::json::parse(TopReportToJson(report));
  EXPECT_EQ(json["nodes"][0]["cpu_percent"], 12.3);
  EXPECT_EQ(json["nodes"][0]["ranks"][0]["steps_per_s"], 0.123);
  EXPECT_EQ(json["nodes"][0]["ranks"][0]["last_output_age_s"], 75.0);
}

TEST(TopReportTest, ANodeWithoutNvidiaSmiHasAnEmptyListOfGpus) {
  TopReport report;
  report.nodes.push_back(NodeFigures{"c"});
  nlohmann::json json = nlohmann::json::parse(TopReportToJson(report));
  EXPECT_TRUE(json["nodes"][0]["gpus"].is_array());
  EXPECT_TRUE(json["nodes"][0]["gpus"].empty());
  FP_ASSERT_OK_AND_ASSIGN(TopReport parsed, TopReportFromJson(json.dump()));
  ASSERT_TRUE(parsed.nodes[0].gpus.has_value());
  EXPECT_TRUE(parsed.nodes[0].gpus->empty());
}

TEST(TopReportTest, WrongFieldsAreNamed) {
  nlohmann::json json = nlohmann::json::parse(TopReportToJson(Sample()));
  nlohmann::json bad_state = json;
  bad_state["nodes"][0]["ranks"][0]["state"] = "sleeping";
  EXPECT_THAT(TopReportFromJson(bad_state.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"state\"")));
  nlohmann::json negative = json;
  negative["nodes"][0]["cpu_percent"] = -1;
  EXPECT_THAT(TopReportFromJson(negative.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"cpu_percent\"")));
  nlohmann::json missing = json;
  missing["nodes"][0]["ranks"][0].erase("step");
  EXPECT_THAT(TopReportFromJson(missing.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"step\" is missing")));
  nlohmann::json text = json;
  text["nodes"][0]["memory_bytes"] = "3 GiB";
  EXPECT_THAT(TopReportFromJson(text.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"memory_bytes\"")));
  EXPECT_THAT(TopReportFromJson("[1]"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(TopReportFromJson("{\"state\""), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fleetplan
