#include "plugins/slurm/job_lookup.h"

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "tools/util/lazy_library.h"

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

// libslurm's functions, opened at the first lookup rather than linked into
// every fleetplan command (the types come from its headers).
struct SlurmApi {
  decltype(&slurm_init) init;
  decltype(&slurm_load_job_user) load_job_user;
  decltype(&slurm_free_job_info_msg) free_job_info_msg;
  decltype(&slurm_strerror) strerror;
  decltype(&slurm_get_errno) get_errno;
};

absl::StatusOr<SlurmApi> OpenSlurm() {
  // Global: the plugins libslurm loads (auth/munge, hash/k12) resolve
  // slurm_conf and its other symbols against it.
  absl::StatusOr<LazyLibrary> library = LazyLibrary::Open(
      "libslurm.so.38", "libslurm38", "the slurm transport", LazyLibrary::Symbols::kGlobal);
  if (!library.ok()) return library.status();
  SlurmApi api{};
  library->Load(api.init, "slurm_init");
  library->Load(api.load_job_user, "slurm_load_job_user");
  library->Load(api.free_job_info_msg, "slurm_free_job_info_msg");
  library->Load(api.strerror, "slurm_strerror");
  library->Load(api.get_errno, "slurm_get_errno");
  if (absl::Status complete = library->Check(); !complete.ok()) return complete;
  // slurm_init reads slurm.conf ($SLURM_CONF) and loads the auth plugin once.
  api.init(nullptr);
  return api;
}

absl::StatusOr<const SlurmApi*> Slurm() {
  return LazyLibrary::Once<SlurmApi>([] { return OpenSlurm(); });
}

}  // namespace

absl::StatusOr<std::optional<AllocationRow>> LookUpJob(const std::string& job_name) {
  absl::StatusOr<const SlurmApi*> slurm = Slurm();
  if (!slurm.ok()) return slurm.status();
  const SlurmApi& api = **slurm;
  job_info_msg_t* jobs = nullptr;
  if (api.load_job_user(&jobs, getuid(), SHOW_ALL) != SLURM_SUCCESS) {
    return absl::UnavailableError(
        absl::StrCat("cannot ask slurmctld for jobs: ", api.strerror(api.get_errno())));
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
  api.free_job_info_msg(jobs);
  return found;
}

}  // namespace fleetplan
