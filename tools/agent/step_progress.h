#ifndef FLEETPLAN_TOOLS_AGENT_STEP_PROGRESS_H_
#define FLEETPLAN_TOOLS_AGENT_STEP_PROGRESS_H_

// How far each rank of a node got: the launch agent feeds every rank's
// output through a StepPattern (tools/protocol/step_pattern.h), keeps each
// rank's last 30 s of steps, and writes them to <run_dir>/progress.json
// when a step came (at most once a second, and every 5 s while any step
// was seen, so that a rank that stopped shows its rate falling). The
// agent's `top` reads the file back (node_top.h) for each rank's step and
// steps per second. Costs the ranks nothing: the agent reads their output
// anyway, and only lines are looked at.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/protocol/step_pattern.h"

namespace fleetplan {

// Over how long a rank's step rate is taken.
inline constexpr absl::Duration kStepRateWindow = absl::Seconds(30);

struct StepPoint {
  absl::Time at;
  int64_t step = 0;

  bool operator==(const StepPoint& other) const { return at == other.at && step == other.step; }
};

// One rank's steps as seen, oldest first; the last is its latest step.
struct RankSteps {
  int rank = 0;
  std::vector<StepPoint> points;
};

// What progress.json holds: a generation's ranks' steps, as of `written`.
struct ProgressRecord {
  int generation = 0;
  absl::Time written;
  std::vector<RankSteps> ranks;
};

// <run_dir>/progress.json.
std::string ProgressPath(absl::string_view run_dir);

// {"generation", "written" (Unix seconds), "ranks": [{"rank", "points":
// [[seconds, step], ...]}]}.
std::string ProgressRecordToJson(const ProgressRecord& record);
// InvalidArgument naming what is wrong.
absl::StatusOr<ProgressRecord> ProgressRecordFromJson(absl::string_view json);

// Steps per second as of `end`: from the last point at or before
// `end - window` (else the first point) to the latest step, over the time
// from that point to `end`. nullopt with fewer than two points, or when the
// step went down (a counter that restarts, such as a step within its
// epoch).
std::optional<double> StepRate(const std::vector<StepPoint>& points, absl::Time end,
                               absl::Duration window = kStepRateWindow);

// Adds a step seen at `at` to `points`, keeping them at least a second
// apart (all but the last) and none older than needed for StepRate at
// `at` (the last one before the window stays).
void AddStepPoint(std::vector<StepPoint>* points, StepPoint point,
                  absl::Duration window = kStepRateWindow);

// The node's ranks' steps in one generation, fed as their output comes.
class StepProgress {
 public:
  // Ranks `first_rank` .. `first_rank + count - 1`, written to `path`.
  StepProgress(StepPattern pattern, std::string path, int generation, int first_rank, int count);

  // A chunk of the output of the node's `index`th rank, seen at `now`.
  // Lines end at '\n' or '\r' (a progress bar redrawn in place); a line
  // over 64 KiB is not looked at.
  void Feed(size_t index, absl::string_view chunk, absl::Time now);
  // Writes the file when it is due at `now` (see above). A failure to
  // write is returned once and the file is not written again.
  absl::Status MaybeWrite(absl::Time now);

  const ProgressRecord& record() const { return record_; }

 private:
  void Line(size_t index, absl::string_view line, absl::Time now);

  StepPattern pattern_;
  std::string path_;
  ProgressRecord record_;
  std::vector<std::string> partial_;  // per rank: the line so far
  std::vector<bool> overlong_;        // per rank: skipping to the next line end
  bool changed_ = false;
  bool failed_ = false;
  absl::Time last_write_ = absl::InfinitePast();
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_STEP_PROGRESS_H_
