#include "plugins/slurm/job_lookup.h"

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <unistd.h>

#include <mutex>

#include "absl/strings/str_cat.h"

namespace fleetplan {
namespace {

// squeue's name for the state, for the states squeue lists by default.
std::optional<std::string> StateName(uint32_t state) {
  if (state & JOB_COMPLETING) return "COMPLETING";
  if (state & JOB_CONFIGURING) return "CONFIGURING";
  switch (state & JOB_STATE_BASE) {
    case JOB_PENDING: return "PENDING";
    case JOB_RUNNING: return "RUNNING";
    case JOB_SUSPENDED: return "SUSPENDED";
    default: return std::nullopt;  // ended: squeue no longer lists it
  }
}

}  // namespace

absl::StatusOr<std::optional<AllocationRow>> LookUpJob(const std::string& job_name) {
  // slurm_init reads slurm.conf ($SLURM_CONF) and loads the auth plugin once.
  static std::once_flag init;
  std::call_once(init, [] { slurm_init(nullptr); });
  job_info_msg_t* jobs = nullptr;
  if (slurm_load_job_user(&jobs, getuid(), SHOW_ALL) != SLURM_SUCCESS) {
    return absl::UnavailableError(
        absl::StrCat("cannot ask slurmctld for jobs: ", slurm_strerror(slurm_get_errno())));
  }
  std::optional<AllocationRow> found;
  for (uint32_t i = 0; i < jobs->record_count; ++i) {
    const slurm_job_info_t& job = jobs->job_array[i];
    if (job.name == nullptr || job_name != job.name) continue;
    std::optional<std::string> state = StateName(job.job_state);
    if (!state.has_value()) continue;
    std::string id = absl::StrCat(job.job_id);
    if (found.has_value() && std::stoul(found->job_id) > job.job_id) continue;
    found = AllocationRow{id, *state, job.nodes != nullptr ? job.nodes : ""};
  }
  slurm_free_job_info_msg(jobs);
  return found;
}

}  // namespace fleetplan
