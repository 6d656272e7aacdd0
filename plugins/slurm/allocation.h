#ifndef FLEETPLAN_PLUGINS_SLURM_ALLOCATION_H_
#define FLEETPLAN_PLUGINS_SLURM_ALLOCATION_H_

// A spec's Slurm allocation: found in squeue by its job name, obtained
// with sbatch (a batch script that holds it: HolderScript), cancelled with
// scancel. Runs the Slurm client
// commands on this machine (the login node), which reach the controller
// through SLURM_CONF.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "plugins/slurm/slurm_settings.h"

namespace fleetplan {

struct Allocation {
  std::string job_id;
  std::vector<std::string> hosts;  // in Slurm's order
  // False for the allocation apply runs inside (SLURM_JOB_ID): not apply's
  // to cancel.
  bool owned = true;
};

// The running allocation named `job_name`, or the one this process runs
// inside; nullopt when there is none. Waits (bounded) for one that is still
// being configured. Unavailable when squeue cannot be run.
absl::StatusOr<std::optional<Allocation>> FindAllocation(const std::string& job_name);

// sinfo's view of whether `settings` can be had for `count` nodes:
// FailedPrecondition naming an unknown partition or what it lacks.
absl::Status CheckCanAllocate(const SlurmSettings& settings, int count);

// sbatch of the holder script (HolderScript), waiting (up to `wait`)
// until it runs; returns the granted allocation. `nodelist` (may be
// empty) names the nodes. FailedPrecondition with sbatch's words when it
// refuses, DeadlineExceeded when nothing was granted within `wait`.
absl::StatusOr<Allocation> Allocate(const SlurmSettings& settings, const std::string& job_name,
                                    int count, const std::vector<std::string>& nodelist,
                                    absl::Duration wait);

// scancel, then waits until squeue no longer shows the job (bounded).
absl::Status CancelAllocation(const Allocation& allocation);

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SLURM_ALLOCATION_H_
