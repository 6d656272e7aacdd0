// `dashboard` end to end in a real browser: a job of two ranks on two local
// nodes printing trainer-style metric lines, the real dashboard binary, and
// Debian's chromium, headless, driven through the DevTools protocol
// (tests/testdata/dashboard_browser.py): the page shows the job's nodes and
// a curve with points and the ranks' output, and its stop button, clicked through the
// confirmation, stops the job.

#include <httplib.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/apply_harness.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/process/subprocess.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kChromium[] = "/usr/bin/chromium";
constexpr char kRankProgram[] = "metrics_rank.sh";

// The most points of the loss chart's polylines in a dumped DOM.
size_t MostLossPoints(const std::string& dom) {
  size_t chart = dom.find("id=\"loss-chart\"");
  size_t end = dom.find("</svg>", chart);
  if (chart == std::string::npos || end == std::string::npos) return 0;
  std::string svg = dom.substr(chart, end - chart);
  size_t most = 0;
  for (size_t at = svg.find("points=\""); at != std::string::npos;
       at = svg.find("points=\"", at + 1)) {
    size_t start = at + 8;
    std::string points = svg.substr(start, svg.find('"', start) - start);
    most = std::max(most, std::vector<std::string>(absl::StrSplit(points, ' ', absl::SkipEmpty()))
                              .size());
  }
  return most;
}

class DashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kChromium, X_OK) != 0) {
      GTEST_SKIP() << kChromium << " is not installed (tools/install-deps.sh --test-beds "
                   << "installs it): the page cannot be loaded in a browser";
    }
    dir_ = MakeTempDir();
    ASSERT_THAT(CopyFileAtomic(Runfile("tests/testdata/metrics_rank.sh"),
                               dir_ + "/src/" + kRankProgram, 0755),
                IsOk());
    spec_ = dir_ + "/cluster.toml";
    ASSERT_THAT(
        WriteFileAtomic(
            spec_,
            absl::StrCat("name = \"dash\"\n[defaults]\ntransport = \"local\"\n"
                         "[[nodes]]\nname = \"a\"\naddress = \"127.0.0.1\"\nchief = true\n"
                         "workdir = ", TomlString(dir_ + "/work-a"),
                         "\n[[nodes]]\nname = \"b\"\naddress = \"127.0.0.2\"\nworkdir = ",
                         TomlString(dir_ + "/work-b"),
                         "\n[sync]\nsource = \"src\"\n[network]\nmaster_port = 29581\n"
                         "[job]\nprogram = \"./", kRankProgram, "\"\nnproc_per_node = 1\n"),
            0644),
        IsOk());
  }

  void TearDown() override {
    dashboard_.reset();  // SIGKILLs its group when it still runs
    if (!spec_.empty()) Tool({"stop", spec_});
  }

  ToolResult Tool(std::vector<std::string> args, absl::Duration timeout = absl::Seconds(60)) {
    args[0] = "tools/fleetplan-" + args[0];
    return RunTool(args, timeout, {{"XDG_RUNTIME_DIR", dir_}});
  }

  std::string JobState() {
    ToolResult status = Tool({"status", "--json", spec_});
    nlohmann::json json = nlohmann::json::parse(status.output, nullptr, false);
    return json.is_object() ? json.value("state", "") : status.output;
  }

  // Starts the dashboard and returns the URL it printed ("" when it
  // printed none in time; what it printed is then in `printed_`).
  std::string StartDashboard() {
    SubprocessOptions options;
    // Through `fleetplan dashboard`, which runs the server program.
    options.argv = {Runfile("tools/fleetplan"), "dashboard", spec_};
    options.env = {{"XDG_RUNTIME_DIR", dir_}, {"RUNFILES_DIR", getenv("TEST_SRCDIR")}};
    absl::StatusOr<std::unique_ptr<Subprocess>> started = Subprocess::Start(options);
    if (!started.ok()) return "";
    dashboard_ = *std::move(started);
    absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline && dashboard_->output_open()) {
      dashboard_->ReadOutput([this](absl::string_view chunk) { absl::StrAppend(&printed_, chunk); });
      size_t at = printed_.find("http://127.0.0.1:");
      size_t end = at == std::string::npos ? at : printed_.find('\n', at);
      if (end != std::string::npos) return printed_.substr(at, end - at);
      absl::SleepFor(absl::Milliseconds(50));
    }
    return "";
  }

  std::string dir_;
  std::string spec_;
  std::string printed_;
  std::unique_ptr<Subprocess> dashboard_;
};

// Requests without the token, or naming another host, reach no handler: a
// stop without the token leaves the job running.
void ExpectRefused(const std::string& url) {
  std::string port = url.substr(17, url.find('/', 17) - 17);  // http://127.0.0.1:PORT/
  std::string token = url.substr(url.find("token=") + 6);
  httplib::Client client("127.0.0.1", std::stoi(port));
  httplib::Result top = client.Get("/api/top");
  ASSERT_TRUE(top) << "no answer from " << url;
  EXPECT_EQ(top->status, 403);
  httplib::Result stop = client.Post("/api/stop");
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->status, 403);
  httplib::Result rebound = client.Get("/api/top", {{"Host", "rebound.example:" + port},
                                                    {"X-Fleetplan-Token", token}});
  ASSERT_TRUE(rebound);
  EXPECT_EQ(rebound->status, 403);
  httplib::Result allowed = client.Get("/api/metrics?since=0", {{"X-Fleetplan-Token", token}});
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200) << allowed->body;
}

TEST_F(DashboardTest, ThePageShowsTheJobAndItsStopButtonStopsIt) {
  ToolResult apply = Tool({"apply", "--detach", spec_}, absl::Seconds(120));
  ASSERT_EQ(apply.status, 0) << apply.output;
  std::string url = StartDashboard();
  ASSERT_FALSE(url.empty()) << printed_;
  ASSERT_NO_FATAL_FAILURE(ExpectRefused(url));
  ASSERT_EQ(JobState(), "running");
  ASSERT_THAT(ProcessesMentioning(kRankProgram, absl::ZeroDuration()), Not(IsEmpty()));

  SubprocessOptions browser;
  browser.argv = {"python3", Runfile("tests/testdata/dashboard_browser.py"), kChromium, url};
  absl::StatusOr<Completed> driven = RunToCompletion(browser, absl::Seconds(150));
  ASSERT_THAT(driven, IsOk());
  nlohmann::json pages = nlohmann::json::parse(driven->output, nullptr, false);
  ASSERT_TRUE(pages.is_object()) << driven->output;
  EXPECT_EQ(pages["error"], "") << pages["before"].get<std::string>();

  const std::string before = pages["before"];
  EXPECT_THAT(before, HasSubstr("<td class=\"node\">a</td>"));
  EXPECT_THAT(before, HasSubstr("<td class=\"node\">b</td>"));
  EXPECT_GE(MostLossPoints(before), 3u) << before;
  // The log view: every node's ranks, the metric lines rendered for people.
  EXPECT_THAT(before, HasSubstr("[b/1] epoch 1 step "));
  EXPECT_THAT(pages["after"].get<std::string>(),
              HasSubstr("stopped: no process of the job is left"));
  EXPECT_EQ(JobState(), "stopped");
  EXPECT_THAT(ProcessesMentioning(kRankProgram), IsEmpty());
  spec_.clear();
}

}  // namespace
}  // namespace fleetplan
