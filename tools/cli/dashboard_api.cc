#include "tools/cli/dashboard_api.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tools/cli/job_commands.h"
#include "tools/protocol/metric_line.h"
#include "tools/protocol/top_report.h"

namespace fleetplan {
namespace {

constexpr size_t kTokenBytes = 32;

// Elements of `items` (in sequence order) after `since`.
template <typename Items, typename SeqOf>
auto After(const Items& items, uint64_t since, SeqOf seq_of) {
  return std::partition_point(items.begin(), items.end(),
                              [&](const auto& item) { return seq_of(item) <= since; });
}

// The generation a "--- restart N of M ... ---" or "--- generation N on M
// nodes ... ---" line of the agent (GenerationHeader) starts.
std::optional<int> RestartGeneration(absl::string_view text) {
  if (!absl::ConsumePrefix(&text, "--- restart ") &&
      !absl::ConsumePrefix(&text, "--- generation ")) {
    return std::nullopt;
  }
  int generation;
  if (!absl::SimpleAtoi(text.substr(0, text.find(' ')), &generation)) return std::nullopt;
  return generation;
}

nlohmann::json OptionalNumber(const std::optional<double>& value) {
  return value.has_value() ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

absl::StatusOr<std::string> NewDashboardToken() {
  unsigned char bytes[kTokenBytes];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    return absl::InternalError("dashboard: OpenSSL's RAND_bytes could not make a token");
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
}

bool TokenMatches(absl::string_view expected, absl::string_view given) {
  // The length is no secret (every token has the same); the bytes are.
  if (expected.empty() || given.size() != expected.size()) return false;
  return CRYPTO_memcmp(expected.data(), given.data(), expected.size()) == 0;
}

bool HostAllowed(absl::string_view host, int port) {
  std::string lower = absl::AsciiStrToLower(host);
  return lower == absl::StrCat("127.0.0.1:", port) || lower == absl::StrCat("localhost:", port);
}

std::optional<Refusal> CheckRequest(absl::string_view host, absl::string_view given_token,
                                    absl::string_view token, int port) {
  if (!HostAllowed(host, port)) {
    return Refusal{403, absl::StrCat("Host must be 127.0.0.1:", port)};
  }
  if (!TokenMatches(token, given_token)) {
    return Refusal{403, "the dashboard's token is missing or wrong: open the URL it printed"};
  }
  return std::nullopt;
}

nlohmann::json TopPageJson(const TopView& view) {
  nlohmann::json out = {{"report", nlohmann::json::parse(TopReportToJson(view.report))},
                        {"stragglers", nlohmann::json::array()},
                        {"unread", nlohmann::json::object()}};
  for (const Straggler& straggler : FindStragglers(view.report)) {
    out["stragglers"].push_back(
        {{"node", straggler.node}, {"rank", straggler.rank}, {"why", straggler.why}});
  }
  for (const auto& [node, why] : view.unread) out["unread"][node] = why;
  return out;
}

absl::StatusOr<uint64_t> ParseSince(absl::string_view since) {
  uint64_t value = 0;
  if (!since.empty() && !absl::SimpleAtoi(since, &value)) {
    return absl::InvalidArgumentError(absl::StrCat("since: not a sequence number: '", since, "'"));
  }
  return value;
}

absl::StatusOr<LogFilter> ParseLogFilter(absl::string_view node, absl::string_view rank,
                                         absl::string_view since) {
  LogFilter filter;
  filter.node = std::string(node);
  if (!rank.empty()) {
    int value;
    if (!absl::SimpleAtoi(rank, &value) || value < 0) {
      return absl::InvalidArgumentError(absl::StrCat("rank: not a rank: '", rank, "'"));
    }
    filter.rank = value;
  }
  absl::StatusOr<uint64_t> after = ParseSince(since);
  if (!after.ok()) return after.status();
  filter.since = *after;
  return filter;
}

void RunOutput::Reset(const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  run_id_ = run_id;
  lines_.clear();
  points_.clear();
  restarts_.clear();
  generation_.clear();
  // Sequence numbers go on: a page that asks `since` an old number gets
  // the new run from its start.
}

void RunOutput::Add(absl::string_view node, absl::string_view line) {
  LogLine split = SplitLogLine(node, absl::StripTrailingAsciiWhitespace(line));
  absl::MutexLock lock(&mu_);
  Line kept{++last_seq_, std::string(node), split.rank, std::string(split.text)};
  if (kept.rank.has_value()) AddRankLine(kept);
  lines_.push_back(std::move(kept));
  if (lines_.size() > max_lines_) lines_.pop_front();
}

void RunOutput::AddRankLine(const Line& line) {
  std::pair<std::string, int> key{line.node, *line.rank};
  if (std::optional<int> generation = RestartGeneration(line.text)) {
    generation_[key] = *generation;
    restarts_.push_back({{"seq", line.seq}, {"node", line.node}, {"rank", *line.rank},
                         {"generation", *generation}, {"line", line.text}});
    return;
  }
  std::optional<MetricEvent> event = ParseMetricEvent(line.text);
  if (!event.has_value() || event->event != "step") return;
  if (!event->loss.has_value() && !event->samples_per_sec.has_value()) return;
  points_.push_back({{"seq", line.seq},
                     {"node", line.node},
                     {"rank", *line.rank},
                     {"generation", generation_[key]},
                     {"step", event->step.has_value() ? nlohmann::json(*event->step) : nullptr},
                     {"loss", OptionalNumber(event->loss)},
                     {"samples_per_sec", OptionalNumber(event->samples_per_sec)}});
  if (points_.size() > max_lines_) points_.pop_front();
}

nlohmann::json RunOutput::MetricsJson(uint64_t since) const {
  absl::MutexLock lock(&mu_);
  auto seq_of = [](const nlohmann::json& item) { return item["seq"].get<uint64_t>(); };
  nlohmann::json out = {{"run_id", run_id_}, {"next", last_seq_}};
  out["points"] = nlohmann::json(std::vector<nlohmann::json>(
      After(points_, since, seq_of), points_.end()));
  out["restarts"] = nlohmann::json(std::vector<nlohmann::json>(
      After(restarts_, since, seq_of), restarts_.end()));
  return out;
}

nlohmann::json RunOutput::LogsJson(const LogFilter& filter) const {
  absl::MutexLock lock(&mu_);
  std::vector<const Line*> matching;
  for (auto it = After(lines_, filter.since, [](const Line& line) { return line.seq; });
       it != lines_.end(); ++it) {
    if (!filter.node.empty() && it->node != filter.node) continue;
    if (filter.rank.has_value() && it->rank != filter.rank) continue;
    matching.push_back(&*it);
  }
  size_t first = matching.size() > filter.limit ? matching.size() - filter.limit : 0;
  nlohmann::json out = {{"run_id", run_id_}, {"next", last_seq_}, {"lines", nlohmann::json::array()}};
  for (size_t i = first; i < matching.size(); ++i) {
    const Line& line = *matching[i];
    std::optional<std::string> readable = HumanMetricLine(line.text);
    out["lines"].push_back({{"seq", line.seq},
                            {"node", line.node},
                            {"rank", line.rank.has_value() ? nlohmann::json(*line.rank) : nullptr},
                            {"line", readable.has_value() ? *readable : line.text}});
  }
  return out;
}

}  // namespace fleetplan
