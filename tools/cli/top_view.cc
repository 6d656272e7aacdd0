#include "tools/cli/top_view.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "tools/util/ansi_style.h"
#include "tools/util/human_units.h"

namespace fleetplan {
namespace {

using Row = std::vector<std::string>;

constexpr char kUnknown[] = "?";
constexpr char kNotApplicable[] = "-";

// The chief's word for the whole job, as `status` says it.
std::string JobStateOf(const std::string& chief_state) {
  if (chief_state == "starting") return "running";
  if (chief_state == "lost") return "failed";  // its agent died without a word
  return chief_state;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Each row's cells padded to their column's width, two blanks apart; the
// last cell of a row as it is.
std::vector<std::string> Columns(const std::vector<Row>& rows) {
  std::vector<size_t> widths;
  for (const Row& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i + 1 < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::vector<std::string> lines;
  for (const Row& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      absl::StrAppend(&line, i == 0 ? "" : "  ", row[i]);
      if (i + 1 < row.size()) line.append(widths[i] - row[i].size(), ' ');
    }
    lines.push_back(std::string(absl::StripTrailingAsciiWhitespace(line)));
  }
  return lines;
}

std::string Percent(const std::optional<double>& value) {
  return value.has_value() ? absl::StrFormat("%.0f%%", *value) : kUnknown;
}

std::string Bytes(const std::optional<uint64_t>& value) {
  return value.has_value() ? FormatBytes(*value) : kUnknown;
}

std::string Rate(double rate) {
  if (rate >= 100) return absl::StrFormat("%.0f", rate);
  return absl::StrFormat(rate >= 10 ? "%.1f" : "%.2f", rate);
}

std::string GpuMemory(const GpuFigures& gpu) {
  return absl::StrCat(Bytes(gpu.memory_used_bytes), " / ", Bytes(gpu.memory_total_bytes));
}

void AddNodeRows(const NodeFigures& node, std::vector<Row>* rows) {
  Row row = {node.name, Percent(node.cpu_percent), Bytes(node.memory_bytes)};
  if (!node.gpus.has_value()) {
    row.push_back(kUnknown);
  } else if (node.gpus->empty()) {
    row.push_back("none");
  }
  if (!node.gpus.has_value() || node.gpus->empty()) {
    rows->push_back(std::move(row));
    return;
  }
  for (const GpuFigures& gpu : *node.gpus) {
    if (&gpu != &node.gpus->front()) row = {"", "", ""};
    row.insert(row.end(), {absl::StrCat(gpu.index), Percent(gpu.util_percent), GpuMemory(gpu)});
    rows->push_back(std::move(row));
  }
}

Row RankRow(const std::string& node, const RankFigures& rank, const std::string& note) {
  bool running = rank.state == RankRunState::kRunning;
  const char* missing = running ? kUnknown : kNotApplicable;
  return {node,
          absl::StrCat(rank.rank),
          absl::StrCat(rank.local_rank),
          rank.pid > 0 ? absl::StrCat(rank.pid) : kNotApplicable,
          std::string(RankRunStateName(rank.state)),
          rank.cpu_percent.has_value() ? Percent(rank.cpu_percent) : missing,
          rank.rss_bytes.has_value() ? FormatBytes(*rank.rss_bytes) : missing,
          rank.last_output_age_s.has_value()
              ? FormatElapsed(absl::Seconds(*rank.last_output_age_s))
              : kNotApplicable,
          rank.step.has_value() ? FormatCount(*rank.step) : kNotApplicable,
          rank.steps_per_s.has_value() ? Rate(*rank.steps_per_s) : kNotApplicable,
          note};
}

std::string Title(const TopView& view, const FrameOptions& options) {
  const TopReport& report = view.report;
  std::string title = absl::StrCat("fleetplan top  ", options.spec, "  job ", report.state);
  if (!report.run_id.empty()) {
    absl::StrAppend(&title, "  run ", report.run_id, "  generation ", report.generation);
  }
  absl::StrAppend(&title, "  ", absl::FormatTime("%H:%M:%S", options.now, options.zone));
  return title;
}

std::vector<std::string> RankLines(const TopView& view, const FrameOptions& options) {
  std::map<std::pair<std::string, int>, std::string> notes;
  for (const Straggler& straggler : FindStragglers(view.report)) {
    notes[{straggler.node, straggler.rank}] = absl::StrCat("straggler: ", straggler.why);
  }
  std::vector<Row> rows = {{"NODE", "RANK", "LOCAL", "PID", "STATE", "CPU", "RSS", "OUTPUT",
                            "STEP", "STEPS/S", ""}};
  for (const NodeFigures& node : view.report.nodes) {
    for (const RankFigures& rank : node.ranks) {
      rows.push_back(RankRow(node.name, rank, notes[{node.name, rank.rank}]));
    }
  }
  if (rows.size() == 1) return {"no rank of the job on any node"};
  std::vector<std::string> lines = Columns(rows);
  if (!options.color) return lines;
  // The notes are the last cells: colour them without moving a column.
  for (size_t i = 1; i < rows.size(); ++i) {
    const std::string& note = rows[i].back();
    if (!note.empty() && absl::EndsWith(lines[i], note)) {
      lines[i] = absl::StrCat(lines[i].substr(0, lines[i].size() - note.size()),
                              ansi::Styled(true, ansi::kYellow, note));
    }
  }
  return lines;
}

}  // namespace

std::string StragglerRule() {
  return absl::StrCat("a running rank is a straggler when its steps per second are under ",
                      absl::StrFormat("%.1f", kStragglerRateShare),
                      "x the median of the running ranks', or when it has written nothing for ",
                      absl::ToInt64Seconds(kStragglerSilence), "s while another rank wrote");
}

TopView GatherTop(const std::vector<std::string>& nodes, size_t chief,
                  const std::vector<absl::StatusOr<TopReport>>& answers) {
  TopView view;
  for (size_t i = 0; i < nodes.size() && i < answers.size(); ++i) {
    if (answers[i].ok() && answers[i]->nodes.size() == 1) {
      view.report.nodes.push_back(answers[i]->nodes[0]);
      view.report.nodes.back().name = nodes[i];
      continue;
    }
    NodeFigures unknown;
    unknown.name = nodes[i];
    unknown.gpus.reset();
    view.report.nodes.push_back(std::move(unknown));
    view.unread[nodes[i]] = answers[i].ok() ? "its answer holds no node"
                                            : std::string(answers[i].status().message());
  }
  if (chief < answers.size() && answers[chief].ok()) {
    view.report.state = JobStateOf(answers[chief]->state);
    view.report.run_id = answers[chief]->run_id;
    view.report.generation = answers[chief]->generation;
  } else {
    view.report.state = "unknown";
  }
  return view;
}

std::vector<Straggler> FindStragglers(const TopReport& report) {
  std::vector<double> rates;
  size_t writing = 0;
  for (const NodeFigures& node : report.nodes) {
    for (const RankFigures& rank : node.ranks) {
      if (rank.state != RankRunState::kRunning) continue;
      if (rank.steps_per_s.has_value()) rates.push_back(*rank.steps_per_s);
      double silent = absl::ToDoubleSeconds(kStragglerSilence);
      if (rank.last_output_age_s.has_value() && *rank.last_output_age_s < silent) ++writing;
    }
  }
  double median = rates.size() >= 2 ? Median(rates) : 0;
  std::vector<Straggler> stragglers;
  for (const NodeFigures& node : report.nodes) {
    for (const RankFigures& rank : node.ranks) {
      if (rank.state != RankRunState::kRunning) continue;
      std::vector<std::string> why;
      if (median > 0 && rank.steps_per_s.has_value() &&
          *rank.steps_per_s < kStragglerRateShare * median) {
        why.push_back(absl::StrCat(Rate(*rank.steps_per_s), " steps/s, ",
                                   absl::StrFormat("%.2f", *rank.steps_per_s / median),
                                   "x the median ", Rate(median)));
      }
      absl::Duration age = absl::Seconds(rank.last_output_age_s.value_or(0));
      if (writing > 0 && age >= kStragglerSilence) {
        why.push_back(absl::StrCat("no output for ", FormatElapsed(age)));
      }
      if (!why.empty()) stragglers.push_back({node.name, rank.rank, absl::StrJoin(why, "; ")});
    }
  }
  return stragglers;
}

std::vector<std::string> RenderTopFrame(const TopView& view, const FrameOptions& options) {
  std::vector<std::string> lines = {Title(view, options), ""};
  std::vector<Row> nodes = {{"NODE", "CPU", "MEMORY", "GPU", "UTIL", "GPU MEMORY"}};
  for (const NodeFigures& node : view.report.nodes) AddNodeRows(node, &nodes);
  for (std::string& line : Columns(nodes)) lines.push_back(std::move(line));
  lines.push_back("");
  for (std::string& line : RankLines(view, options)) lines.push_back(std::move(line));
  for (const auto& [node, why] : view.unread) {
    lines.push_back(absl::StrCat("node ", node, " could not be read: ", why));
  }
  if (options.live) {
    lines.push_back("");
    lines.push_back(absl::StrCat("q quits; ", StragglerRule()));
  }
  return lines;
}

}  // namespace fleetplan
