#ifndef FLEETPLAN_TOOLS_PROTOCOL_METRIC_LINE_H_
#define FLEETPLAN_TOOLS_PROTOCOL_METRIC_LINE_H_

// The trainer's metric events (trainer/metrics.h: one JSON object per line,
// `{"event":"step","epoch":0,"step":300,"loss":0.348,...}`), as a person
// reads them on a terminal. Machines (`--json`, pipes, files) keep the raw
// lines.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace fleetplan {

// `line` as a rank's output reaches apply and `logs` (the agent's
// `[node/rank] ` prefix, then the rank's line): when the rank's line is a
// metric event, the line for people, prefix kept:
//   [a/0] epoch 1/2 step 300/469 loss 0.348 5,450 samples/s
//   [a/0] epoch 1/2 ended: loss 0.348, test accuracy 0.888, 5,412 samples/s
//   [a/0] test accuracy 0.888 after 2 epochs, 41s
// nullopt for any other line (print it as it is).
std::optional<std::string> HumanMetricLine(absl::string_view line);

// The step of a rank's line (as the rank wrote it, no prefix) when it is a
// metric event of the trainer that carries one (`"step":300`: the step
// counted from the run's start, not within its epoch); nullopt for any
// other line.
std::optional<int64_t> MetricLineStep(absl::string_view line);

// The figures of one metric event of the trainer, as a dashboard plots
// them: each present only when the event carries it as a number.
struct MetricEvent {
  std::string event;  // "step", "epoch", "done", ...
  std::optional<int64_t> step;
  std::optional<int64_t> epoch;
  std::optional<double> loss;
  std::optional<double> samples_per_sec;
};

// The event of a rank's line (as the rank wrote it, no prefix) when it is
// one of the trainer's metric events; nullopt for any other line.
std::optional<MetricEvent> ParseMetricEvent(absl::string_view line);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_METRIC_LINE_H_
