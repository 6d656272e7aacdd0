#ifndef FLEETPLAN_PLUGINS_SLURM_JOB_LOOKUP_H_
#define FLEETPLAN_PLUGINS_SLURM_JOB_LOOKUP_H_

// This user's pending or running job of a name, asked of slurmctld through
// the Slurm C API (libslurm): what `squeue --me --name` answers, without
// starting squeue, which an unchanged apply would otherwise spend a good
// part of its time on.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "plugins/slurm/slurm_commands.h"

namespace fleetplan {

// The job named `job_name` of this user that is pending, configuring,
// running or completing (the newest when several are), or nullopt.
// Unavailable when slurmctld cannot be asked (the caller may use squeue).
absl::StatusOr<std::optional<AllocationRow>> LookUpJob(const std::string& job_name);

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SLURM_JOB_LOOKUP_H_
