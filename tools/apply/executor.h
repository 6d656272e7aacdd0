#ifndef FLEETPLAN_TOOLS_APPLY_EXECUTOR_H_
#define FLEETPLAN_TOOLS_APPLY_EXECUTOR_H_

// The executor runs a Plan: phases in order with a barrier between them,
// the steps of a phase in parallel on up to `parallelism` threads, over one
// channel per node (NodeChannels, opened at the start through the
// ConnectionFactory it is handed, and reused). A step whose hash its node
// recorded after an earlier success is skipped ("unchanged"; StepRecords).
// Each kind of step has its runner: BuildStep, KeySteps, SyncSteps (direct
// or relayed), WriteEnvironment, CheckSteps (the preflight phase, all nodes
// or none, stopping apply before launch naming each failed check) and
// LaunchSteps (every node's agent started at once, the job followed until
// it ends). The executor orders the phases, dispatches each step to its
// runner, and holds the chief's lock while it changes anything.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "tools/apply/apply_lock.h"
#include "tools/apply/apply_options.h"
#include "tools/apply/build_step.h"
#include "tools/apply/check_steps.h"
#include "tools/apply/connect_nodes.h"
#include "tools/apply/key_steps.h"
#include "tools/apply/launch_steps.h"
#include "tools/apply/node_channels.h"
#include "tools/apply/progress.h"
#include "tools/apply/run_state.h"
#include "tools/apply/step_context.h"
#include "tools/apply/step_records.h"
#include "tools/apply/sync_steps.h"
#include "tools/plan/forecast.h"
#include "tools/plan/plan.h"
#include "tools/spec/cluster_spec.h"
#include "tools/sync/manifest.h"

namespace fleetplan {

class Executor {
 public:
  // `spec`, `plan`, `source` (the synced tree's manifest; empty without
  // [sync]), `reporter` and `connections` (how nodes are reached) must
  // outlive the executor.
  Executor(const ClusterSpec& spec, const Plan& plan, const Manifest& source,
           ApplyOptions options, ProgressReporter& reporter,
           const ConnectionFactory& connections);
  ~Executor();

  // Opens a connection to every node, in parallel; the first node that
  // cannot be reached is named. Does nothing once they are open. Run calls
  // it; calling it first keeps connecting out of what Run takes (benchmarks).
  absl::Status Connect() { return Open(/*tolerate_not_there=*/false); }

  // Runs the plan. Reports every step to the reporter, but not the end of
  // the apply (the caller does). After a Run that succeeded, Run may be
  // called again: it runs the plan anew over the same connections, so what
  // the nodes recorded is skipped (the sync benchmark's unchanged rounds).
  ApplyResult Run();

  // `plan --refresh`: connects (run it with transport.read_only) and reads
  // what each node holds of earlier applies: its step records, and how
  // the source tree differs from the manifest of its last sync; a node that
  // apply would create holds nothing yet. Changes nothing. Errors name the
  // node that could not be reached or read (executor_refresh.cc).
  absl::StatusOr<std::map<std::string, NodeState>> ReadNodeStates();

  // Stops the apply from any thread (a signal handler's thread): running
  // commands are cancelled, no new step starts, Run returns
  // kExitInterrupted once everything has stopped.
  void Interrupt();

  // The nodes a read-only run (`plan --check`, `plan --refresh`) found not
  // there yet (a docker container that apply would create), in spec order.
  // `plan --check` reports their checks skipped; `plan --refresh` reads
  // them as holding nothing.
  std::vector<std::string> NodesNotThereYet() const { return channels_.NotThereYet(); }

 private:
  absl::Status Open(bool tolerate_not_there);
  // Reads what the phases decide from (the chief's job, the nodes' records)
  // before they run; the result that ends the run, if any.
  std::optional<ApplyResult> ReadAhead();
  ApplyResult RunPhase(const Phase& phase);
  // The plan's phases in order; the first that fails ends the run.
  ApplyResult RunPhases();
  // Each step of a phase that is not the sync, preflight or launch: the
  // phase's waves in order, the steps of a wave in parallel.
  void RunWaves(const Phase& phase);
  // One step, by its kind, on its node.
  StepOutcome Execute(const Step& step, const absl::Notification* serving_done);

  const ApplyOptions options_;
  const Manifest& source_;
  NodeChannels channels_;
  StepRecords records_;
  RunState state_;
  const StepContext context_;
  const StepScheduler scheduler_;
  BuildStep build_;
  KeySteps keys_;
  CheckSteps checks_;
  SyncSteps sync_;
  LaunchSteps launch_;
  ApplyLock lock_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_EXECUTOR_H_
