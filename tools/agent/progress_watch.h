#ifndef FLEETPLAN_TOOLS_AGENT_PROGRESS_WATCH_H_
#define FLEETPLAN_TOOLS_AGENT_PROGRESS_WATCH_H_

// Whether a node's ranks made progress, sampled every few seconds while the
// job has a hang_timeout: a rank progressed when it wrote output, when its
// processes (the rank and what it started) used CPU time beyond a rank that
// waits (1% of a core over the sample), or, where `nvidia-smi` answers, when
// one of the node's GPUs was busy. What is watched is cheap: /proc reads
// and a byte count the agent keeps anyway; nvidia-smi only where it is.
//
// Limits: a rank that spins (busy-polls a GPU collective, a spin lock)
// counts as progressing; GPU utilization is the node's, not a rank's.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/agent/process_tree.h"

namespace fleetplan {

// What one rank showed at one moment.
struct RankActivity {
  int rank = 0;
  pid_t pid = 0;
  uint64_t output_bytes = 0;
};

// The node's GPUs' utilization in percent, one per GPU; nullopt when it
// cannot be read (no nvidia-smi, no driver). Asked once per sample.
using GpuUtilization = std::function<std::optional<std::vector<int>>()>;

// nvidia-smi's utilization.gpu of every GPU (its CSV, read here and only
// here), within `timeout`.
GpuUtilization NvidiaSmi(absl::Duration timeout = absl::Seconds(5));

class ProgressWatch {
 public:
  // `processes` reads /proc (ReadProcesses); `gpus` may be empty: not
  // watched. `ticks_per_second` is sysconf(_SC_CLK_TCK).
  ProgressWatch(std::function<std::vector<ProcessInfo>()> processes, GpuUtilization gpus,
                long ticks_per_second);

  // Samples the ranks at `now`: true when one progressed since the last
  // sample. The first sample of a generation (other pids) only records.
  bool Sample(const std::vector<RankActivity>& ranks, absl::Time now);

  // Why GPUs are not watched ("" while they are): said once in the log.
  const std::string& gpu_note() const { return gpu_note_; }

 private:
  struct Seen {
    pid_t pid = 0;
    uint64_t output_bytes = 0;
    uint64_t cpu_ticks = 0;
  };

  std::function<std::vector<ProcessInfo>()> processes_;
  GpuUtilization gpus_;
  long ticks_per_second_;
  std::map<int, Seen> seen_;  // by rank
  absl::Time last_ = absl::InfinitePast();
  std::string gpu_note_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_PROGRESS_WATCH_H_
