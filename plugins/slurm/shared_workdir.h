#ifndef FLEETPLAN_PLUGINS_SLURM_SHARED_WORKDIR_H_
#define FLEETPLAN_PLUGINS_SLURM_SHARED_WORKDIR_H_

// Whether a workdir is one filesystem that every host of an allocation
// sees (an NFS home, a Lustre scratch), and, when it is, which files were
// put there already: the sync then sends each file once, not once per
// host. Found out once per workdir: a marker written from one host is
// looked for from all of them in one job step.

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "plugins/transport.h"

namespace fleetplan {

class SharedWorkdir {
 public:
  // `probe(root)` says whether `root` is shared by every host (run once per
  // root, under the lock).
  explicit SharedWorkdir(std::function<absl::StatusOr<bool>(const std::string&)> probe)
      : probe_(std::move(probe)) {}

  // Puts `files` under `root` through `put`, leaving out those already put
  // on a shared root. Calls from several hosts are serialised on a shared
  // root, so the first sends and the others find it done. Returns the bytes
  // that went through `put`.
  absl::StatusOr<uint64_t> Put(const std::vector<FileToSend>& files, const std::string& root,
                   const std::function<absl::Status(const std::vector<FileToSend>&)>& put)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  std::function<absl::StatusOr<bool>(const std::string&)> probe_;
  absl::Mutex mu_;
  std::map<std::string, bool> shared_ ABSL_GUARDED_BY(mu_);  // root -> shared
  // "root\0path\0local\0size" of what was put on shared roots.
  std::set<std::string> put_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SLURM_SHARED_WORKDIR_H_
