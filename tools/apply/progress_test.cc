#include "tools/apply/progress.h"

#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

std::string Capture(ReportStyle style, bool color) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&data, &size);
  {
    auto reporter = MakeReporter(style, out, color, {"a"});
    Step step;
    step.phase = PhaseKind::kSync;
    step.node = "a";
    step.kind = "sync-tree";
    reporter->StepStarted(step);
    reporter->StepFinished(step, StepStatus::kChanged, absl::Milliseconds(1200), "");
    reporter->OutputLine("a", "[a/0] hello");
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
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[1]["status"], "changed");
  EXPECT_EQ(events[1]["phase"], "sync");
  EXPECT_EQ(events[2]["line"], "[a/0] hello");
  EXPECT_EQ(events[3]["exit_code"], 3);
}

TEST(ProgressTest, LiveRedrawsWithColour) {
  std::string text = Capture(ReportStyle::kLive, true);
  EXPECT_THAT(text, HasSubstr("\033[1A"));
  EXPECT_THAT(text, HasSubstr("\033[33mchanged"));
  EXPECT_THAT(text, HasSubstr("[a/0] hello\n"));
}

}  // namespace
}  // namespace fleetplan
