#ifndef FLEETPLAN_TOOLS_PROTOCOL_TOP_REPORT_H_
#define FLEETPLAN_TOOLS_PROTOCOL_TOP_REPORT_H_

// What `top` shows of a job: every node's CPU, memory and GPUs and every
// rank's CPU, memory, output and steps. Each node's agent answers
// `fleetplan-agent top` with one of these holding its own node (one line
// of JSON); `top --json` prints the whole job's, one per refresh:
//
//   {"state", "run_id", "generation",
//    "nodes": [{"name", "cpu_percent", "memory_bytes",
//               "gpus": [{"index", "util_percent", "memory_used_bytes",
//                         "memory_total_bytes"}],
//               "ranks": [{"rank", "local_rank", "pid", "state", "cpu_percent",
//                          "rss_bytes", "last_output_age_s", "step",
//                          "steps_per_s"}]}]}
//
// One writer and one parser, here. A figure that could not be read is
// null, never 0; "gpus" is [] on a node without nvidia-smi and null where
// nvidia-smi failed.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

struct GpuFigures {
  int index = 0;
  std::optional<double> util_percent;
  std::optional<uint64_t> memory_used_bytes;
  std::optional<uint64_t> memory_total_bytes;

  bool operator==(const GpuFigures& other) const;
};

// Where a rank is in its life: running, exited (status 0), failed (another
// status), not started, or gone (job.json says it runs, /proc has no such
// process).
enum class RankRunState { kRunning, kExited, kFailed, kNotStarted, kGone };

// "running", "exited", "failed", "not started", "gone".
absl::string_view RankRunStateName(RankRunState state);

struct RankFigures {
  int rank = 0;
  int local_rank = 0;
  int pid = 0;  // 0: not started
  RankRunState state = RankRunState::kRunning;
  // Of one core, over the sample, for the rank and every process it
  // started: 100 is one core busy.
  std::optional<double> cpu_percent;
  std::optional<uint64_t> rss_bytes;          // the same processes' resident memory
  std::optional<double> last_output_age_s;   // since the rank last wrote
  std::optional<int64_t> step;               // the last step it reported
  std::optional<double> steps_per_s;         // over the last 30 s

  bool operator==(const RankFigures& other) const;
};

struct NodeFigures {
  std::string name;
  std::optional<double> cpu_percent;    // of all the node's cores: 100 is all busy
  std::optional<uint64_t> memory_bytes;  // in use: total less available
  // nullopt: unknown (nvidia-smi failed); empty: the node has no nvidia-smi.
  std::optional<std::vector<GpuFigures>> gpus = std::vector<GpuFigures>{};
  std::vector<RankFigures> ranks;

  bool operator==(const NodeFigures& other) const;
};

struct TopReport {
  // none, or the job's state: running, succeeded, failed, stopped (a
  // node's own answer: its agent's phase, or "lost" for an agent that
  // stopped writing its state).
  std::string state = "none";
  std::string run_id;
  int generation = 0;
  std::vector<NodeFigures> nodes;

  bool operator==(const TopReport& other) const;
};

// One line of JSON, no newline.
std::string TopReportToJson(const TopReport& report);

// InvalidArgument naming the field that is missing or wrong (a negative
// figure, an unknown rank state, more than 65,536 ranks on a node or 256
// GPUs).
absl::StatusOr<TopReport> TopReportFromJson(absl::string_view json);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_TOP_REPORT_H_
