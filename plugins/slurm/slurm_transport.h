#ifndef FLEETPLAN_PLUGINS_SLURM_SLURM_TRANSPORT_H_
#define FLEETPLAN_PLUGINS_SLURM_SLURM_TRANSPORT_H_

// The `slurm` transport: the nodes are the hosts of a Slurm allocation.
// apply obtains it (sbatch of a batch script that holds it, job name
// "fleetplan-<spec name>"), or uses the one it runs inside (SLURM_JOB_ID);
// placeholder nodes ([slurm] nodes = N) take the allocated hostnames, named
// [[nodes]] are asked for by name. Every step runs as a job step on its node
// (slurm_connection.h); the launch agents, as one job step of their own
// (agent_step.h). A failed apply and apply --destroy cancel the
// allocation (scancel). Nothing is kept on this machine: later commands
// find the allocation in squeue by its job name.

#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "plugins/slurm/agent_step.h"
#include "plugins/slurm/allocation.h"
#include "plugins/slurm/shared_workdir.h"
#include "plugins/slurm/state_snapshot.h"
#include "plugins/slurm/state_step.h"
#include "plugins/transport.h"

namespace fleetplan {

class SlurmTransport : public Transport {
 public:
  absl::Status ValidateNode(const ClusterSpec& spec, const NodeSpec& node) const override;
  // NotFound when the spec has no allocation yet (apply obtains one) or the
  // node is not one of its hosts.
  absl::StatusOr<std::unique_ptr<Connection>> Connect(const ClusterSpec& spec,
                                                      const NodeSpec& node,
                                                      const TransportOptions& options) override;
  absl::Status ResolveNodes(ClusterSpec& spec, const TransportOptions& options) override;
  absl::Status Release(const ClusterSpec& spec) override;
  // Cancels the spec's allocation (once, whichever node asks first).
  absl::Status Destroy(const ClusterSpec& spec, const NodeSpec& node) override {
    return Release(spec);
  }

 private:
  // What this process knows of an allocation, by job name.
  struct Known {
    Allocation allocation;
    std::unique_ptr<SharedWorkdir> shared;
    // The launch agents of the spec's nodes, started as one job step.
    std::unique_ptr<AgentStep> agents;
    // Each node's state folder as the first Connect read it for all of
    // them in one step; a node's connection takes its own.
    bool snapshotted = false;
    std::map<std::string, StateSnapshot> snapshots;
    // This machine sees every node's state folder (state_here.h): they
    // were read here, and the connections read and lock here.
    bool state_here = false;
    // The step that read them, until the chief's connection takes it
    // (state_step.h); null where it could not start.
    std::unique_ptr<StateStep> state_step;
  };
  // The spec's allocation, from memory or squeue; nullptr when none.
  absl::StatusOr<Known*> Find(const ClusterSpec& spec) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Known* Remember(const ClusterSpec& spec, Allocation allocation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<Known>> known_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SLURM_SLURM_TRANSPORT_H_
