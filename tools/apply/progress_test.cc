#include "tools/apply/progress.h"

#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/protocol/check_line.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

constexpr char kMetricLine[] =
    R"([a/0] {"epoch":0,"epochs":1,"event":"step","loss":0.5,"step":20,"steps_per_epoch":40})";

std::string Capture(ReportStyle style, bool color) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&data, &size);
  {
    auto reporter = MakeReporter(style, out, color, {"a"});
    Step step;
    step.phase = PhaseKind::kSync;
    step.node = "a";
    step.kind = StepKind::kSyncTree;
    reporter->StepStarted(step);
    reporter->StepFinished(step, StepStatus::kChanged, absl::Milliseconds(1200), "");
    reporter->OutputLine("a", "[a/0] hello");
    reporter->OutputLine("a", kMetricLine);
    reporter->Finished(false, 3, "rank 0 on node 'a' failed with exit status 3");
  }
  std::fclose(out);
  std::string text(data, size);
  free(data);
  return text;
}

TEST(ProgressTest, PlainLines) {
  std::string text = Capture(ReportStyle::kPlain, false);
  EXPECT_THAT(text, HasSubstr("[a] sync: changed (1.2s)\n"));
  EXPECT_THAT(text, HasSubstr("[a/0] hello\n"));
  EXPECT_THAT(text, HasSubstr(std::string(kMetricLine) + "\n")) << "pipes keep the raw line";
  EXPECT_THAT(text, HasSubstr("apply failed: rank 0 on node 'a'"));
  EXPECT_EQ(text.find('\033'), std::string::npos) << "no colour unless asked";
}

TEST(ProgressTest, JsonEvents) {
  std::string text = Capture(ReportStyle::kJson, false);
  std::vector<nlohmann::json> events;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    events.push_back(nlohmann::json::parse(text.substr(start, end - start)));
    start = end + 1;
  }
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[1]["status"], "changed");
  EXPECT_EQ(events[1]["phase"], "sync");
  EXPECT_EQ(events[2]["line"], "[a/0] hello");
  EXPECT_EQ(events[3]["line"], kMetricLine) << "machines keep the raw line";
  EXPECT_EQ(events[4]["exit_code"], 3);
}

// A relayed node's sync names the node its files came from.
TEST(ProgressTest, SyncTrafficNamesWhereARelayedNodesFilesCameFrom) {
  std::vector<SyncTraffic> nodes = {
      {"a", "direct", 100, 100, absl::Seconds(1)},
      {"b", "relay", 100, 0, absl::Seconds(2), "a"},
      {"c", "relay (fallback to the chief)", 100, 0, absl::Seconds(2), "a"}};
  EXPECT_THAT(SyncSummaryLine(nodes, absl::Seconds(3)),
              HasSubstr("(a 100 B direct 1.0s, b 0 B relay from a 2.0s, "
                        "c 0 B relay (fallback to the chief) from a 2.0s)"));
  char* data = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&data, &size);
  MakeReporter(ReportStyle::kJson, out, false, {"a", "b", "c"})
      ->SyncReported(nodes, absl::Seconds(3));
  std::fclose(out);
  nlohmann::json sync = nlohmann::json::parse(std::string(data, size));
  free(data);
  EXPECT_FALSE(sync["nodes"][0].contains("from")) << sync;
  EXPECT_EQ(sync["nodes"][1]["from"], "a") << sync;
  EXPECT_EQ(sync["nodes"][2]["via"], "relay (fallback to the chief)") << sync;
}

TEST(ProgressTest, LiveRedrawsWithColour) {
  std::string text = Capture(ReportStyle::kLive, true);
  EXPECT_THAT(text, HasSubstr("[a/0] epoch 1/1 step 20/40 loss 0.500\n"))
      << "a terminal reads the trainer's metric lines as sentences";
  EXPECT_THAT(text, HasSubstr("\033[1A"));
  EXPECT_THAT(text, HasSubstr("\033[33mchanged"));
  EXPECT_THAT(text, HasSubstr("[a/0] hello\n"));
}

// What each style prints for a preflight report with one failure.
std::string CaptureChecks(ReportStyle style, bool color) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&data, &size);
  {
    PreflightReport report({"a", "b"});
    report.Add("a", ParseCheckOutput("fleetplan-check workdir ok /w: writable\n"
                                     "fleetplan-fact nccl_socket_ifname eth0\n"
                                     "fleetplan-check nccl ok eth0 holds 10.0.0.1\n"));
    report.Add("b", ParseCheckOutput("fleetplan-check workdir fail /w: not writable\n"));
    MakeReporter(style, out, color, {"a", "b"})->ChecksReported(report);
  }
  std::fclose(out);
  std::string text(data, size);
  free(data);
  return text;
}

TEST(ProgressTest, ChecksAsATableOrAsEvents) {
  std::string table = CaptureChecks(ReportStyle::kPlain, false);
  EXPECT_THAT(table, HasSubstr("  node  workdir  nccl\n"
                               "  a     ok       eth0\n"
                               "  b     FAIL     -\n"));
  EXPECT_THAT(table, HasSubstr("  FAIL b workdir: /w: not writable\n"));
  EXPECT_EQ(table.find('\033'), std::string::npos);
  EXPECT_THAT(CaptureChecks(ReportStyle::kPlain, true), HasSubstr("\033[31mFAIL"));

  std::string json = CaptureChecks(ReportStyle::kJson, false);
  EXPECT_THAT(json, HasSubstr(R"({"check":"workdir","event":"check","message":"/w: not writable","node":"b","status":"fail"})"));
  EXPECT_THAT(json, HasSubstr(R"({"event":"fact","name":"nccl_socket_ifname","node":"a","value":"eth0"})"));
}

}  // namespace
}  // namespace fleetplan
