#ifndef FLEETPLAN_TOOLS_APPLY_JOB_KEY_DELIVERY_H_
#define FLEETPLAN_TOOLS_APPLY_JOB_KEY_DELIVERY_H_

// The per-job key on apply's side: made once per apply from the OS's
// CSPRNG when a node first needs it (a relay or a launch), and written to
// each node through its transport only (Connection::WriteFile, mode 0600,
// in the node's state folder): never on a command line, in the plan or in
// a step record. The agents read it from there (--key-file).

#include <optional>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "plugins/transport.h"
#include "tools/secure/job_key.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

class JobKeyDelivery {
 public:
  // Writes this apply's key to `node` through `connection` unless it did
  // already. Internal when no key could be made; the transport's error,
  // naming the node, when the write fails. Thread-safe.
  absl::Status EnsureOn(Connection& connection, const NodeSpec& node)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  std::optional<JobKey> key_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> delivered_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_JOB_KEY_DELIVERY_H_
