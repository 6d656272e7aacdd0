#include "tools/apply/progress.h"

#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"
#include "tools/protocol/metric_line.h"
#include "tools/util/ansi_style.h"
#include "tools/util/human_units.h"

namespace fleetplan {
namespace {

// The last line of an apply: complete (and what it left running), detached
// (the job goes on), or failed.
std::string FinalLine(bool ok, int exit_code, absl::string_view message, bool color) {
  if (ok) return message.empty() ? "apply complete" : absl::StrCat("apply complete: ", message);
  if (exit_code == kExitDetached) {
    return ansi::Styled(color, ansi::kYellow, absl::StrCat("apply detached: ", message));
  }
  return ansi::Styled(color, ansi::kRed, absl::StrCat("apply failed: ", message));
}

absl::string_view StatusColor(StepStatus status) {
  switch (status) {
    case StepStatus::kRunning:
      return ansi::kCyan;
    case StepStatus::kChanged:
      return ansi::kYellow;  // like ansible's "changed"
    case StepStatus::kUnchanged:
      return ansi::kGreen;
    case StepStatus::kFailed:
    case StepStatus::kCancelled:
      return ansi::kRed;
  }
  return "";
}

std::string Seconds(absl::Duration elapsed) {
  return FormatElapsed(elapsed);
}

class PlainReporter : public ProgressReporter {
 public:
  // Without `steps`, only the preflight summary and the end are printed.
  PlainReporter(std::FILE* out, bool color, bool steps = true)
      : out_(out), color_(color), steps_(steps) {}

  void StepStarted(const Step&) override {}

  void StepFinished(const Step& step, StepStatus status, absl::Duration elapsed,
                    absl::string_view detail) override {
    if (!steps_) return;
    std::string name = ansi::Styled(color_, StatusColor(status), StepStatusName(status));
    std::string line = absl::StrCat("[", step.node, "] ", PhaseName(step.phase), ": ",
                                    name, " (", Seconds(elapsed), ")");
    if (!detail.empty()) absl::StrAppend(&line, " ", detail);
    Print(line);
  }

  void OutputLine(absl::string_view, absl::string_view line) override { Print(line); }

  void SyncReported(const std::vector<SyncTraffic>& nodes, absl::Duration elapsed) override {
    if (steps_) Print(SyncSummaryLine(nodes, elapsed));
  }

  void ChecksReported(const PreflightReport& report) override {
    std::string table = RenderPreflightTable(report, color_);
    table.pop_back();  // Print adds the newline
    Print(table);
  }

  void Finished(bool ok, int exit_code, absl::string_view message) override {
    Print(FinalLine(ok, exit_code, message, color_));
  }

 private:
  void Print(absl::string_view line) {
    absl::MutexLock lock(&mu_);
    std::fprintf(out_, "%.*s\n", static_cast<int>(line.size()), line.data());
    std::fflush(out_);
  }

  absl::Mutex mu_;
  std::FILE* out_;
  bool color_;
  bool steps_;
};

class JsonReporter : public ProgressReporter {
 public:
  explicit JsonReporter(std::FILE* out) : out_(out) {}

  void StepStarted(const Step& step) override {
    Emit({{"event", "step"}, {"node", step.node}, {"phase", std::string(PhaseName(step.phase))},
          {"kind", std::string(StepKindName(step.kind))}, {"status", "running"}});
  }

  void StepFinished(const Step& step, StepStatus status, absl::Duration elapsed,
                    absl::string_view detail) override {
    Emit({{"event", "step"}, {"node", step.node}, {"phase", std::string(PhaseName(step.phase))},
          {"kind", std::string(StepKindName(step.kind))},
          {"status", std::string(StepStatusName(status))},
          {"seconds", absl::ToDoubleSeconds(elapsed)}, {"detail", std::string(detail)}});
  }

  void OutputLine(absl::string_view node, absl::string_view line) override {
    Emit({{"event", "output"}, {"node", std::string(node)}, {"line", std::string(line)}});
  }

  void SyncReported(const std::vector<SyncTraffic>& nodes, absl::Duration elapsed) override {
    nlohmann::json per_node = nlohmann::json::array();
    uint64_t uplink = 0, bytes = 0;
    for (const SyncTraffic& node : nodes) {
      per_node.push_back({{"node", node.node}, {"via", node.via}, {"bytes", node.bytes},
                          {"uplink_bytes", node.uplink_bytes},
                          {"seconds", absl::ToDoubleSeconds(node.elapsed)}});
      if (!node.from.empty()) per_node.back()["from"] = node.from;
      uplink += node.uplink_bytes;
      bytes += node.bytes;
    }
    Emit({{"event", "sync"}, {"uplink_bytes", uplink}, {"bytes", bytes},
          {"seconds", absl::ToDoubleSeconds(elapsed)}, {"nodes", per_node}});
  }

  void ChecksReported(const PreflightReport& report) override {
    for (const NodeChecks* node : report.Reported()) {
      for (const CheckResult& result : node->checks) {
        Emit({{"event", "check"}, {"node", node->node}, {"check", result.check},
              {"status", std::string(CheckStatusName(result.status))},
              {"message", result.message}});
      }
      for (const auto& [name, value] : node->facts) {
        Emit({{"event", "fact"}, {"node", node->node}, {"name", name}, {"value", value}});
      }
    }
  }

  void Finished(bool ok, int exit_code, absl::string_view message) override {
    Emit({{"event", "done"}, {"ok", ok}, {"exit_code", exit_code}, {"message", std::string(message)}});
  }

 private:
  void Emit(const nlohmann::json& event) {
    // Output lines need not be UTF-8; replace bad bytes rather than throw.
    std::string text = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    absl::MutexLock lock(&mu_);
    std::fprintf(out_, "%s\n", text.c_str());
    std::fflush(out_);
  }

  absl::Mutex mu_;
  std::FILE* out_;
};

// One line per node, redrawn in place below the job's output.
class LiveReporter : public ProgressReporter {
 public:
  LiveReporter(std::FILE* out, bool color, std::vector<std::string> nodes)
      : out_(out), color_(color), nodes_(std::move(nodes)) {
    for (const std::string& node : nodes_) lines_[node] = "waiting";
  }

  void StepStarted(const Step& step) override {
    Update(step.node, absl::StrCat(PhaseName(step.phase), ": ",
                                   Colored(StepStatus::kRunning), "…"));
  }

  void StepFinished(const Step& step, StepStatus status, absl::Duration elapsed,
                    absl::string_view detail) override {
    std::string line = absl::StrCat(PhaseName(step.phase), ": ", Colored(status), " (",
                                    Seconds(elapsed), ")");
    if (!detail.empty() && status != StepStatus::kFailed) {
      absl::StrAppend(&line, " ", detail);
    }
    Update(step.node, line);
  }

  void OutputLine(absl::string_view, absl::string_view line) override {
    // On a terminal, the trainer's metric lines read as sentences.
    std::optional<std::string> readable = HumanMetricLine(line);
    if (readable.has_value()) line = *readable;
    absl::MutexLock lock(&mu_);
    Erase();
    std::fprintf(out_, "%.*s\n", static_cast<int>(line.size()), line.data());
    Draw();
  }

  void SyncReported(const std::vector<SyncTraffic>& nodes, absl::Duration elapsed) override {
    std::string line = SyncSummaryLine(nodes, elapsed);
    absl::MutexLock lock(&mu_);
    Erase();
    std::fprintf(out_, "%s\n", line.c_str());
    Draw();
  }

  void ChecksReported(const PreflightReport& report) override {
    std::string table = RenderPreflightTable(report, color_);
    absl::MutexLock lock(&mu_);
    Erase();
    std::fputs(table.c_str(), out_);
    Draw();
  }

  void Finished(bool ok, int exit_code, absl::string_view message) override {
    absl::MutexLock lock(&mu_);
    Erase();
    Draw();
    drawn_ = 0;  // leave the final table on screen
    std::fprintf(out_, "%s\n", FinalLine(ok, exit_code, message, color_).c_str());
    std::fflush(out_);
  }

 private:
  std::string Colored(StepStatus status) {
    return ansi::Styled(color_, StatusColor(status), StepStatusName(status));
  }

  void Update(const std::string& node, std::string line) {
    absl::MutexLock lock(&mu_);
    lines_[node] = std::move(line);
    Erase();
    Draw();
  }

  // Moves the cursor up over the table and clears it.
  void Erase() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (int i = 0; i < drawn_; ++i) std::fputs("\033[1A\033[2K", out_);
    drawn_ = 0;
  }

  void Draw() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const std::string& node : nodes_) {
      std::fprintf(out_, "  %-20s %s\n", node.c_str(), lines_[node].c_str());
      ++drawn_;
    }
    std::fflush(out_);
  }

  absl::Mutex mu_;
  std::FILE* out_;
  bool color_;
  std::vector<std::string> nodes_;
  std::map<std::string, std::string> lines_ ABSL_GUARDED_BY(mu_);
  int drawn_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace


std::string SyncSummaryLine(const std::vector<SyncTraffic>& nodes, absl::Duration elapsed) {
  uint64_t uplink = 0, bytes = 0;
  std::vector<std::string> parts;
  for (const SyncTraffic& node : nodes) {
    uplink += node.uplink_bytes;
    bytes += node.bytes;
    parts.push_back(absl::StrCat(node.node, " ", FormatBytes(node.uplink_bytes), " ", node.via,
                                 node.from.empty() ? "" : absl::StrCat(" from ", node.from), " ",
                                 Seconds(node.elapsed)));
  }
  return absl::StrCat("sync: ", FormatBytes(uplink), " sent from this machine for ",
                      FormatBytes(bytes), " written on ", nodes.size(),
                      nodes.size() == 1 ? " node" : " nodes", " in ", Seconds(elapsed), " (",
                      absl::StrJoin(parts, ", "), ")");
}

absl::string_view StepStatusName(StepStatus status) {
  switch (status) {
    case StepStatus::kRunning:
      return "running";
    case StepStatus::kChanged:
      return "changed";
    case StepStatus::kUnchanged:
      return "unchanged";
    case StepStatus::kFailed:
      return "failed";
    case StepStatus::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

std::unique_ptr<ProgressReporter> MakeReporter(ReportStyle style, std::FILE* out,
                                               bool color,
                                               std::vector<std::string> nodes) {
  switch (style) {
    case ReportStyle::kJson:
      return std::make_unique<JsonReporter>(out);
    case ReportStyle::kLive:
      return std::make_unique<LiveReporter>(out, color, std::move(nodes));
    case ReportStyle::kSummary:
      return std::make_unique<PlainReporter>(out, color, /*steps=*/false);
    case ReportStyle::kPlain:
      break;
  }
  return std::make_unique<PlainReporter>(out, color);
}

}  // namespace fleetplan
