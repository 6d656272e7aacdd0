#ifndef FLEETPLAN_TOOLS_AGENT_HANG_WATCH_H_
#define FLEETPLAN_TOOLS_AGENT_HANG_WATCH_H_

// A node agent's part in finding a hung job (its coordinator decides,
// job_coordinator.h): it samples its ranks' progress every few seconds
// (progress_watch.h) and, when asked, collects their stacks in the
// background (stack_collector.h) so that the agent keeps its heartbeats
// and output going meanwhile. Nothing runs while the job has no
// hang_timeout; `stacks` collects on demand either way.

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/agent/progress_watch.h"
#include "tools/agent/rank_group.h"
#include "tools/agent/stack_collector.h"
#include "tools/protocol/stack_report.h"

namespace fleetplan {

// Where the full stacks of `rank` in `generation` go, beside its log:
// <run_dir>/rank-<RANK>.stacks-<GEN>.txt.
std::string RankStacksPath(const std::string& run_dir, int rank, int generation);

class HangWatch {
 public:
  // `hang_timeout` zero: progress is not sampled.
  HangWatch(std::string node, absl::Duration hang_timeout, StackCollectorOptions stacks = {});
  ~HangWatch();

  // Samples `ranks` when a sample is due at `now`: true when one of them
  // progressed since the last sample.
  bool ProgressedSince(const RankGroup& ranks, absl::Time now);
  // Something worth a line in the agent's log, once ("GPU utilization is
  // not watched: ..."); empty when there is none.
  std::string TakeNote();

  // Starts collecting the stacks of the ranks of `ranks` that still run
  // (generation `generation`, files under `run_dir`); a collection under way
  // is not started again.
  void StartCollecting(const RankGroup& ranks, const std::string& run_dir, int generation);
  struct Collected {
    int generation = 0;
    std::vector<RankStack> ranks;
  };
  // The collection once it is done (once); nullopt before.
  std::optional<Collected> TakeCollected();

 private:
  std::string node_;
  absl::Duration hang_timeout_;
  absl::Duration interval_;
  StackCollectorOptions stacks_;
  std::unique_ptr<ProgressWatch> progress_;
  absl::Time next_sample_ = absl::InfinitePast();
  bool note_said_ = false;
  std::future<std::vector<RankStack>> collecting_;
  int collecting_generation_ = 0;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_HANG_WATCH_H_
