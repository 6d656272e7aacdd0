#include "tools/apply/job_key_delivery.h"

#include "absl/strings/str_cat.h"
#include "tools/protocol/node_layout.h"

namespace fleetplan {

absl::Status JobKeyDelivery::EnsureOn(Connection& connection, const NodeSpec& node) {
  std::string text;
  {
    absl::MutexLock lock(&mu_);
    if (delivered_.count(node.name) > 0) return absl::OkStatus();
    if (!key_.has_value()) {
      absl::StatusOr<JobKey> made = MakeJobKey();
      if (!made.ok()) return made.status();
      key_ = *made;
    }
    text = JobKeyFileText(*key_);
  }
  absl::Status written = connection.WriteFile(JobKeyPath(node), text, 0600);
  if (!written.ok()) {
    return absl::Status(written.code(), absl::StrCat("node '", node.name,
                                                     "': writing the job's key: ",
                                                     written.message()));
  }
  absl::MutexLock lock(&mu_);
  delivered_.insert(node.name);
  return absl::OkStatus();
}

}  // namespace fleetplan
