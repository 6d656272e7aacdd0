#ifndef FLEETPLAN_TRAINER_METRICS_H_
#define FLEETPLAN_TRAINER_METRICS_H_

// The trainer's output: one JSON object per line on stdout, flushed at once
// so a supervisor reading the pipe sees each line as it happens.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace fleetplan::trainer {

// What one log line reports. Optional fields are left out when unset.
struct MetricsRecord {
  std::string event;  // "step", "epoch", "checkpoint", "resume", "done"
  int64_t epoch = 0;
  int64_t step = 0;  // global optimizer steps taken so far
  int rank = 0;
  int world_size = 1;
  int64_t epochs = 0;           // of the whole run (0: unknown)
  int64_t steps_per_epoch = 0;  // (0: unknown)
  std::optional<double> loss;
  std::optional<double> test_accuracy;
  std::optional<double> samples_per_sec;
  std::optional<int64_t> samples_seen;  // by all ranks together
  std::optional<std::string> param_digest;
  std::optional<double> seconds;  // "done": since the training started
  // "resume": the world size and step count the checkpoint was written
  // with, and the position in the epoch it resumes at (dataset.h).
  std::optional<int> checkpoint_world_size;
  std::optional<int64_t> checkpoint_step;
  std::optional<int64_t> epoch_position;
};

// The record as a single-line JSON object.
std::string FormatMetrics(const MetricsRecord& record);

// Writes records as lines to `out` and flushes.
class MetricsWriter {
 public:
  explicit MetricsWriter(std::ostream& out) : out_(out) {}
  void Write(const MetricsRecord& record);

 private:
  std::ostream& out_;
};

// Samples per second over an interval that Reset() starts.
class Throughput {
 public:
  Throughput() { Reset(); }
  void Reset();
  void Add(int64_t samples) { samples_ += samples; }
  double SamplesPerSec() const;

 private:
  absl::Time start_;
  int64_t samples_ = 0;
};

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_METRICS_H_
