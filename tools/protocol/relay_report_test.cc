#include "tools/protocol/relay_report.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;

TEST(RelayReportTest, WhatTheAgentWritesApplyReadsBack) {
  std::string output = absl::StrCat(
      "some words for people\n", RelayServingLine({29501}), "\n",
      RelayFallbackLine({"n1", "n1 at 10.0.0.2:29501: connection refused"}), "\n",
      RelayReceivedLine({3, 8388632, {"n1", "chief"}, 0}), "\n");
  RelayReport report = ParseRelayReport(output);
  ASSERT_TRUE(report.serving.has_value());
  EXPECT_EQ(report.serving->port, 29501);
  ASSERT_EQ(report.fallbacks.size(), 1u);
  EXPECT_EQ(report.fallbacks[0].from, "n1");
  ASSERT_TRUE(report.received.has_value());
  EXPECT_EQ(report.received->bytes, 8388632u);
  EXPECT_THAT(report.received->from, ElementsAre("n1", "chief"));
  EXPECT_EQ(DescribeRelayReceived(*report.received),
            "received 3 files (8.0 MiB) from n1 and chief, removed 0");
  EXPECT_EQ(DescribeRelayFallback(report.fallbacks[0]),
            "relay: falling back from n1 (n1 at 10.0.0.2:29501: connection refused)");
}

TEST(RelayReportTest, WordsThatMerelyLookLikeALineAreNotOne) {
  RelayReport report = ParseRelayReport(
      "relay: serving /w on port 1\n"
      "fleetplan-relay {\"event\":\"serving\"}\n"           // no port
      "fleetplan-relay {\"event\":\"received\",\"files\":\"3\"}\n"  // a string
      "fleetplan-relay not json\n");
  EXPECT_FALSE(report.serving.has_value());
  EXPECT_FALSE(report.received.has_value());
}

}  // namespace
}  // namespace fleetplan
