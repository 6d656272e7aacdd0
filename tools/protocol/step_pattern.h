#ifndef FLEETPLAN_TOOLS_PROTOCOL_STEP_PATTERN_H_
#define FLEETPLAN_TOOLS_PROTOCOL_STEP_PATTERN_H_

// Which lines of a rank's output say how far it got: the trainer's metric
// events (metric_line.h) always, and, for any program, the spec's
// `[job] progress` regular expression (RE2 syntax), whose first capturing
// group is the step: `"step (\\d+)"` reads 300 from "epoch 1 step 300".
// The spec checks the expression with the same rules; the launch agent
// applies it to every line its ranks write.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace fleetplan {

// Why `regex` cannot be a progress pattern ("missing ): step (\d+", "it
// has no capturing group around the step"); "" when it can.
std::string ProgressPatternError(const std::string& regex);

class StepPattern {
 public:
  // `regex` empty: the trainer's metric lines only. InvalidArgument saying
  // what ProgressPatternError says.
  static absl::StatusOr<StepPattern> Make(const std::string& regex);

  // The step `line` (one line as the rank wrote it, without its newline)
  // reports: a metric event's "step", else the pattern's first group
  // where the pattern matches somewhere in the line and the group is a
  // whole number; nullopt otherwise.
  std::optional<int64_t> StepOf(absl::string_view line) const;

 private:
  std::shared_ptr<const re2::RE2> regex_;  // null: no pattern
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_STEP_PATTERN_H_
