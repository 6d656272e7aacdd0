#include "trainer/metrics.h"

#include "nlohmann/json.hpp"

namespace fleetplan::trainer {

std::string FormatMetrics(const MetricsRecord& record) {
  nlohmann::json line = {{"event", record.event},
                         {"epoch", record.epoch},
                         {"step", record.step},
                         {"rank", record.rank},
                         {"world_size", record.world_size}};
  if (record.epochs > 0) line["epochs"] = record.epochs;
  if (record.steps_per_epoch > 0) line["steps_per_epoch"] = record.steps_per_epoch;
  if (record.loss) line["loss"] = *record.loss;
  if (record.test_accuracy) line["test_accuracy"] = *record.test_accuracy;
  if (record.samples_per_sec) line["samples_per_sec"] = *record.samples_per_sec;
  if (record.samples_seen) line["samples_seen"] = *record.samples_seen;
  if (record.param_digest) line["param_digest"] = *record.param_digest;
  if (record.seconds) line["seconds"] = *record.seconds;
  if (record.checkpoint_world_size) {
    line["checkpoint_world_size"] = *record.checkpoint_world_size;
  }
  if (record.checkpoint_step) line["checkpoint_step"] = *record.checkpoint_step;
  if (record.epoch_position) line["epoch_position"] = *record.epoch_position;
  return line.dump();
}

void MetricsWriter::Write(const MetricsRecord& record) {
  out_ << FormatMetrics(record) << '\n';
  out_.flush();
}

void Throughput::Reset() {
  start_ = absl::Now();
  samples_ = 0;
}

double Throughput::SamplesPerSec() const {
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start_);
  return seconds > 0 ? samples_ / seconds : 0.0;
}

}  // namespace fleetplan::trainer
