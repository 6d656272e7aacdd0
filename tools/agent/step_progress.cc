#include "tools/agent/step_progress.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tools/process/files.h"
#include "tools/protocol/json_fields.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

constexpr char kDocument[] = "progress.json";
constexpr size_t kMaxLineBytes = 64 * 1024;
constexpr size_t kMaxPoints = 64;
constexpr size_t kMaxRanks = 65536;
// How often the file is written while steps come, and while none do.
constexpr absl::Duration kWriteEvery = absl::Seconds(1);
constexpr absl::Duration kRewriteEvery = absl::Seconds(5);

double UnixSeconds(absl::Time time) { return absl::ToDoubleSeconds(time - absl::UnixEpoch()); }

absl::StatusOr<StepPoint> PointFromJson(const nlohmann::json& json) {
  if (!json.is_array() || json.size() != 2 || !json[0].is_number() ||
      !json[1].is_number_integer()) {
    return InvalidField(kDocument, "points", "holds something not a [seconds, step] pair");
  }
  return StepPoint{absl::UnixEpoch() + absl::Seconds(json[0].get<double>()),
                   json[1].get<int64_t>()};
}

absl::StatusOr<RankSteps> RankStepsFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return InvalidField(kDocument, "ranks", "holds something not an object");
  JsonFields fields(json, kDocument);
  RankSteps rank;
  FP_RETURN_IF_ERROR(fields.Get("rank", 0, 1 << 30, &rank.rank));
  const nlohmann::json* points = fields.Optional("points");
  if (points == nullptr || !points->is_array() || points->size() > kMaxPoints) {
    return InvalidField(kDocument, "points", "is not a list of at most 64 points");
  }
  for (const nlohmann::json& item : *points) {
    FP_ASSIGN_OR_RETURN(StepPoint point, PointFromJson(item));
    rank.points.push_back(point);
  }
  return rank;
}

}  // namespace

std::string ProgressPath(absl::string_view run_dir) {
  return absl::StrCat(run_dir, "/progress.json");
}

std::string ProgressRecordToJson(const ProgressRecord& record) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankSteps& rank : record.ranks) {
    nlohmann::json points = nlohmann::json::array();
    for (const StepPoint& point : rank.points) {
      points.push_back(nlohmann::json::array({UnixSeconds(point.at), point.step}));
    }
    ranks.push_back({{"rank", rank.rank}, {"points", std::move(points)}});
  }
  nlohmann::json out = {{"generation", record.generation},
                        {"written", UnixSeconds(record.written)},
                        {"ranks", std::move(ranks)}};
  return out.dump();
}

absl::StatusOr<ProgressRecord> ProgressRecordFromJson(absl::string_view json) {
  nlohmann::json parsed = nlohmann::json::parse(json, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(kDocument, ": not a JSON object"));
  }
  JsonFields fields(parsed, kDocument);
  ProgressRecord record;
  FP_RETURN_IF_ERROR(fields.Get("generation", 0, 1 << 30, &record.generation));
  const nlohmann::json* written = fields.Optional("written");
  if (written == nullptr || !written->is_number()) {
    return InvalidField(kDocument, "written", "is not a number of seconds");
  }
  record.written = absl::UnixEpoch() + absl::Seconds(written->get<double>());
  const nlohmann::json* ranks = fields.Optional("ranks");
  if (ranks == nullptr || !ranks->is_array() || ranks->size() > kMaxRanks) {
    return InvalidField(kDocument, "ranks", "is not a list of ranks");
  }
  for (const nlohmann::json& item : *ranks) {
    FP_ASSIGN_OR_RETURN(RankSteps rank, RankStepsFromJson(item));
    record.ranks.push_back(std::move(rank));
  }
  return record;
}

std::optional<double> StepRate(const std::vector<StepPoint>& points, absl::Time end,
                               absl::Duration window) {
  if (points.size() < 2) return std::nullopt;
  const StepPoint* start = &points.front();
  for (const StepPoint& point : points) {
    if (point.at <= end - window) start = &point;
  }
  double elapsed = absl::ToDoubleSeconds(end - start->at);
  int64_t steps = points.back().step - start->step;
  if (elapsed <= 0 || steps < 0) return std::nullopt;
  return static_cast<double>(steps) / elapsed;
}

void AddStepPoint(std::vector<StepPoint>* points, StepPoint point, absl::Duration window) {
  size_t n = points->size();
  // The last point moves on until it is a second past the one before it;
  // then it stays and the new one is added.
  if (n >= 2 && points->back().at - (*points)[n - 2].at < absl::Seconds(1)) {
    points->back() = point;
  } else {
    points->push_back(point);
  }
  // The last point at or before the window's start is where the rate
  // starts from; those before it go.
  size_t drop = 0;
  while (drop + 1 < points->size() && (*points)[drop + 1].at <= point.at - window) ++drop;
  if (points->size() - drop > kMaxPoints) drop = points->size() - kMaxPoints;
  points->erase(points->begin(), points->begin() + drop);
}

StepProgress::StepProgress(StepPattern pattern, std::string path, int generation,
                           int first_rank, int count)
    : pattern_(std::move(pattern)),
      path_(std::move(path)),
      partial_(count),
      overlong_(count, false) {
  record_.generation = generation;
  for (int i = 0; i < count; ++i) record_.ranks.push_back({first_rank + i, {}});
}

void StepProgress::Feed(size_t index, absl::string_view chunk, absl::Time now) {
  if (index >= partial_.size()) return;
  while (!chunk.empty()) {
    size_t end = chunk.find_first_of("\r\n");
    absl::string_view piece = chunk.substr(0, end);
    if (!overlong_[index]) {
      if (partial_[index].size() + piece.size() > kMaxLineBytes) {
        overlong_[index] = true;
        partial_[index].clear();
      } else {
        partial_[index].append(piece.data(), piece.size());
      }
    }
    if (end == absl::string_view::npos) return;
    if (!overlong_[index]) Line(index, partial_[index], now);
    partial_[index].clear();
    overlong_[index] = false;
    chunk.remove_prefix(end + 1);
  }
}

void StepProgress::Line(size_t index, absl::string_view line, absl::Time now) {
  std::optional<int64_t> step = pattern_.StepOf(line);
  if (!step.has_value()) return;
  AddStepPoint(&record_.ranks[index].points, {now, *step});
  changed_ = true;
}

absl::Status StepProgress::MaybeWrite(absl::Time now) {
  if (failed_) return absl::OkStatus();
  bool seen_any = changed_ || last_write_ != absl::InfinitePast();
  if (!seen_any) return absl::OkStatus();  // no step yet: no file
  absl::Duration since = now - last_write_;
  if (since < (changed_ ? kWriteEvery : kRewriteEvery)) return absl::OkStatus();
  record_.written = now;
  absl::Status written =
      WriteFileAtomic(path_, ProgressRecordToJson(record_), 0600, Durability::kProcess);
  last_write_ = now;
  changed_ = false;
  if (!written.ok()) {
    failed_ = true;
    return absl::Status(written.code(),
                        absl::StrCat("the ranks' steps are not recorded: ", written.message()));
  }
  return absl::OkStatus();
}

}  // namespace fleetplan
