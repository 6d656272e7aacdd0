#include "tools/protocol/check_line.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TEST(CheckLineTest, FormatsOneLine) {
  EXPECT_EQ(FormatCheckLine({"port", CheckStatus::kFail, "in use\nby x"}),
            "fleetplan-check port fail in use by x");
}

TEST(CheckLineTest, ParsesChecksAndFactsAmongOtherOutput) {
  CheckOutput parsed = ParseCheckOutput(
      "noise before\n"
      "fleetplan-check workdir ok /w: writable by root\n"
      "fleetplan-fact libtorch 123 456 /usr/lib/libtorch_cpu.so.1.13.0\r\n"
      "fleetplan-check gpus skip no nvidia-smi; GPU ids 0 not checked\n"
      "fleetplan-check odd maybe not a status\n"
      "fleetplan-checkx port fail not a check line\n"
      "fleetplan-check port fail\n"
      "  fleetplan-check connect fail indented: still a check");
  ASSERT_EQ(parsed.checks.size(), 4u);
  EXPECT_EQ(parsed.checks[0].check, "workdir");
  EXPECT_EQ(parsed.checks[0].status, CheckStatus::kOk);
  EXPECT_EQ(parsed.checks[0].message, "/w: writable by root");
  EXPECT_EQ(parsed.checks[1].status, CheckStatus::kSkip);
  EXPECT_EQ(parsed.checks[1].message, "no nvidia-smi; GPU ids 0 not checked");
  EXPECT_EQ(parsed.checks[2].check, "port");
  EXPECT_EQ(parsed.checks[2].message, "");
  EXPECT_EQ(parsed.checks[3].message, "indented: still a check");
  EXPECT_THAT(parsed.facts,
              ElementsAre(Pair("libtorch", "123 456 /usr/lib/libtorch_cpu.so.1.13.0")));
}

TEST(CheckLineTest, RoundTrips) {
  CheckResult result{"connect", CheckStatus::kOk, "connected to a:1 (10.0.0.1) in 0.1s"};
  CheckOutput parsed = ParseCheckOutput(FormatCheckLine(result));
  ASSERT_EQ(parsed.checks.size(), 1u);
  EXPECT_EQ(parsed.checks[0].check, result.check);
  EXPECT_EQ(parsed.checks[0].status, result.status);
  EXPECT_EQ(parsed.checks[0].message, result.message);
}

}  // namespace
}  // namespace fleetplan
