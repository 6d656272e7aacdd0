#ifndef FLEETPLAN_TOOLS_APPLY_EXECUTOR_H_
#define FLEETPLAN_TOOLS_APPLY_EXECUTOR_H_

// The executor runs a Plan: phases in order with a barrier between them,
// the steps of a phase in parallel on up to `parallelism` threads, one
// Connection per node (from the registry, opened at the start and reused).
// A step whose hash the node recorded after an earlier success is skipped
// ("unchanged"). The preflight phase runs on every node or on none, checks
// every node even when one fails, and stops apply before launch naming each
// failed check (its summary goes to the reporter). The launch phase starts
// every node's agent detached (the chief's coordinates the job: fail-fast,
// restarts, heartbeats; see tools/agent/node_agent.h), then, unless told to
// detach, follows the ranks' logs on every node until the job ends. Ctrl-C
// stops the job everywhere; a lost connection only detaches.

#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "plugins/transport.h"
#include "tools/apply/agent_session.h"
#include "tools/apply/job_key_delivery.h"
#include "tools/apply/preflight_report.h"
#include "tools/apply/progress.h"
#include "tools/apply/state_lock.h"
#include "tools/plan/forecast.h"
#include "tools/plan/plan.h"
#include "tools/protocol/job_state.h"
#include "tools/spec/cluster_spec.h"
#include "tools/sync/manifest.h"
#include "tools/sync/sync_tree.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {

struct ApplyOptions {
  int parallelism = 10;
  bool force = false;  // run every step even when its hash is recorded
  TransportOptions transport;
  // Where the build phase runs `bazel build`.
  std::string workspace;
  // The launch agent on this machine, synced to every node as
  // .fleetplan/bin/fleetplan-agent; empty: none (tests).
  std::string agent_path;
  // `plan --check`: run the plan's (preflight) steps whatever the nodes
  // recorded, and record nothing on them.
  bool check_only = false;
  // How long a command of a step on a node may run before it is stopped and
  // the step fails; the job (launch) and the local build are not bound.
  absl::Duration step_timeout = absl::Minutes(10);
  // Return once every rank has started, leaving the job to run.
  bool detach = false;
  // A job of this spec still running: stop it first (else apply refuses
  // when it would change anything).
  bool replace = false;
  // How the user runs status, logs and stop, for the messages that name
  // them ("bazel run //tools:status -- SPEC").
  std::string status_command = "bazel run //tools:status -- SPEC";
  std::string logs_command = "bazel run //tools:logs -- SPEC --follow";
  std::string stop_command = "bazel run //tools:stop -- SPEC";
  // The spec's [secrets] as read on this machine (by name), written to
  // each node's secrets file (SecretsPath, 0600) by the environment step;
  // and their keyed digest, which that step records in place of a value,
  // so a changed value writes the file again and relaunches.
  EnvList secret_values;
  std::string secrets_digest;
  // Hold the chief's .fleetplan/apply.lock (state_lock.h) from the moment
  // the nodes are connected until the job is launched (or Run returns):
  // waiting up to `lock_timeout` for another apply, stop or destroy of the
  // spec. Following the job changes nothing, so it holds no lock.
  bool lock_state = false;
  absl::Duration lock_timeout = absl::ZeroDuration();
  // Told what the lock waits for, or whose stale lock it took over.
  std::function<void(absl::string_view)> on_lock_message;
};

struct ApplyResult {
  // 0; kExitApplyFailed when a step failed; the failing rank's exit status
  // when the job failed; kExitInterrupted after Interrupt().
  int exit_code = 0;
  std::string message;  // why it failed
  // Said on success instead of "apply complete" (a job left running, or
  // one that runs already).
  std::string note;
  // Refused because a job of this spec runs: what holds that job stays.
  bool job_untouched = false;
};

class Executor {
 public:
  // `spec`, `plan`, `source` (the synced tree's manifest; empty without
  // [sync]) and `reporter` must outlive the executor.
  Executor(const ClusterSpec& spec, const Plan& plan, const Manifest& source,
           ApplyOptions options, ProgressReporter& reporter);
  ~Executor();

  // Opens a connection to every node, in parallel; the first node that
  // cannot be reached is named. Does nothing once they are open. Run calls
  // it; calling it first keeps connecting out of what Run takes (benchmarks).
  absl::Status Connect() { return ConnectNodes(/*tolerate_not_there=*/false); }

  // Runs the plan. Reports every step to the reporter, but not the end of
  // the apply (the caller does). After a Run that succeeded, Run may be
  // called again: it runs the plan anew over the same connections, so what
  // the nodes recorded is skipped (the sync benchmark's unchanged rounds).
  ApplyResult Run();

  // `plan --refresh`: connects (run it with transport.read_only) and reads
  // what each node holds of earlier applies: its step records, and how
  // the source tree differs from the manifest of its last sync; a node that
  // apply would create holds nothing yet. Changes nothing. Errors name the
  // node that could not be reached or read.
  absl::StatusOr<std::map<std::string, NodeState>> ReadNodeStates();

  // Stops the apply from any thread (a signal handler's thread): running
  // commands are cancelled, no new step starts, Run returns
  // kExitInterrupted once everything has stopped.
  void Interrupt();

  // The nodes a read-only run (`plan --check`, `plan --refresh`) found not
  // there yet (a docker container that apply would create), in spec order.
  // `plan --check` reports their checks skipped; `plan --refresh` reads
  // them as holding nothing.
  std::vector<std::string> NodesNotThereYet() const;

 private:
  // What one step did.
  struct Outcome {
    StepStatus status = StepStatus::kChanged;
    std::string detail;   // shown beside the status
    std::string failure;  // the full failure message (kFailed only)
    int exit_status = 0;  // of the step's command, when it ran one
    // A failed check does not stop the other nodes' checks; anything else
    // that fails stops the phase.
    bool stops_phase = true;
    // The step's command recorded its hash on the node already.
    bool recorded = false;

    static Outcome Failed(std::string failure, int exit_status = 0) {
      Outcome outcome;
      outcome.status = StepStatus::kFailed;
      outcome.failure = std::move(failure);
      outcome.exit_status = exit_status;
      return outcome;
    }
  };
  class NodeOutput;

  // Connect; with `tolerate_not_there`, a node whose transport says it is
  // not there yet (NotFound: a read-only connect to a node apply would
  // create) gets no connection and goes into not_there_ instead of failing.
  absl::Status ConnectNodes(bool tolerate_not_there);
  // A node of the check phase that is not there yet: its checks are
  // reported skipped, with why.
  void SkipChecksOf(const Step& step) ABSL_LOCKS_EXCLUDED(mu_);

  // Takes the chief's lock (options_.lock_state): nullopt when held, else
  // the result that ends Run (kExitLocked naming the holder).
  std::optional<ApplyResult> LockState();
  // Gives it back (a failure to is told to on_lock_message).
  void UnlockState();
  ApplyResult RunPhase(const Phase& phase);
  ApplyResult RunPreflight(const Phase& phase);
  ApplyResult RunLaunch(const Phase& phase);
  // Starts every node's agent at once (run_id_ set); the first node that
  // failed by itself cancels the others. Returns its failure, or "".
  std::string StartAgents(const Phase& phase);
  // A job of this spec that still runs (`job`, read on the chief): nullopt
  // when none does; else the result that ends this apply (nothing changed:
  // 0; changes refused), or an empty result once --replace stopped it.
  std::optional<ApplyResult> CheckRunningJob(const std::optional<NodeJobState>& job);
  // Follows every node's rank logs until the job ends; its result.
  ApplyResult FollowJob(const std::string& run_id);
  // Stops the job on every node (`stop`); the first error names its node.
  absl::Status StopJob();
  // The chief's job.json, nullopt when it has none or it cannot be read.
  std::optional<NodeJobState> ReadChiefJobState();
  void RunSteps(const std::vector<const Step*>& steps, int threads);
  // `serving_done` (for a step that serves its phase): notified once the
  // phase's other steps have ended, which closes the step's stdin.
  void RunOneStep(const Step& step, const absl::Notification* serving_done = nullptr);
  Outcome Execute(const Step& step, const absl::Notification* serving_done);
  Outcome Build(const Step& step);
  Outcome EnsureKey(const Step& step);
  Outcome AuthorizeKey(const Step& step);
  Outcome SyncNode(const Step& step);
  // The direct sync: every changed file from this machine to the node.
  Outcome SyncDirect(const Step& step, const NodeSpec& node);
  // Is the workdir there, writable, with room for `bytes`? Failed outcome
  // (stopping the phase) when not.
  Outcome CheckWorkdir(const Step& step, const NodeSpec& node, uint64_t bytes);
  // Sync relay (executor_relay.cc): true when `[sync] relay` applies here.
  bool UseRelay() const;
  // Runs the sync steps: directly, or, with the relay, the chief's first
  // and then the others fetching along the relay chain.
  void RunSyncSteps(const std::vector<const Step*>& steps);
  // A node fetches its changed files from its parent in the relay chain
  // (the chief, relay_from_, when that fails), passing them on meanwhile.
  Outcome RelayNode(const Step& step, const NodeSpec& node);
  void NoteSyncTraffic(SyncTraffic traffic) ABSL_LOCKS_EXCLUDED(mu_);
  // After a node's sync changed files: an extra (the agent, a built
  // binary) or the job's program among them means the preflight checks
  // must run again; other source files (an edited script) do not.
  void NoteSyncChanges(const SyncResult& changes) ABSL_LOCKS_EXCLUDED(mu_);
  // Reads every node's recorded manifest into recorded_, in parallel; the
  // most bytes a node lacks. Nullopt (and recorded_ partial) when a node
  // could not be read: its sync step will say why.
  std::optional<uint64_t> ReadRecordedManifests(const std::vector<const Step*>& steps);
  // Fills prefetched_ for every node but `except`, when a relayed sync may
  // follow.
  void PrefetchRecordedManifests(const std::string& except);
  // Places the nodes of `steps` that lack files in the relay chain.
  void LinkRelayChain(const std::vector<const Step*>& steps);
  Outcome WriteEnv(const Step& step);
  // Runs preflight checks (`script`) for `step`, adds what they found to
  // the report; failed checks fail the step without stopping the phase.
  Outcome RunChecks(const Step& step, const std::string& script,
                    const absl::Notification* serving_done);
  // What the checks that printed `output` found, added to the report;
  // `ran` is how their command ended.
  Outcome CheckFindings(const Step& step, Outcome ran, const std::string& output);
  // `node`'s session, or null when it has none.
  AgentSessionConnection* SessionOf(const std::string& node) const;
  // With `serving_done`, stdin is held until it is notified. `env` is
  // added to the command's environment.
  Outcome RunCommand(const Step& step, const std::string& command, std::string* output,
                     const absl::Notification* serving_done = nullptr,
                     const EnvList& env = {});
  Outcome Skippable(const Step& step, const std::string& hash);
  // Reads every node's records of the phases after the sync at once (a
  // batched read per node, executor_records.cc), so that those phases
  // decide without a round trip each.
  void PrefetchStepRecords();
  // What `step`'s node recorded for its phase, from what was read ahead or
  // written since; nullopt when unknown (read it from the node).
  std::optional<std::string> KnownRecord(const Step& step) const ABSL_LOCKS_EXCLUDED(mu_);
  // Notes that `step`'s node now records `hash` ("": nothing).
  void NoteRecord(const Step& step, const std::string& hash) ABSL_LOCKS_EXCLUDED(mu_);
  // Notes that what `step`'s node records is not known any more.
  void ForgetRecord(const Step& step) ABSL_LOCKS_EXCLUDED(mu_);
  // True when every step of `phase` is recorded on its node.
  bool AllRecorded(const Phase& phase);
  // Reports every step of `phase` as unchanged.
  void ReportUnchanged(const Phase& phase);
  absl::Status Record(const Step& step, const std::string& hash);
  // Shell text that records `hash` for `step` on its node, for a command
  // that ends the step ("" under --check).
  std::string RecordCommand(const Step& step, const std::string& hash) const;
  // Records every step of `phase` on its node (all or none of a phase
  // succeeded: preflight, launch); the first failure names its node.
  ApplyResult RecordPhase(const Phase& phase);
  void ReportChecks() ABSL_LOCKS_EXCLUDED(mu_);
  const NodeSpec* FindNode(const std::string& name) const;
  // The preamble of the plan's phase of `kind` ("" when none).
  const std::string& PhasePreamble(PhaseKind kind) const;
  const absl::Notification* CancelFor(const std::string& node) const;
  void CancelAll();
  void NoteFailure(std::string message) ABSL_LOCKS_EXCLUDED(mu_);
  bool Stopping() const ABSL_LOCKS_EXCLUDED(mu_);

  const ClusterSpec& spec_;
  const Plan& plan_;
  const Manifest& source_;
  const ApplyOptions options_;
  ProgressReporter& reporter_;

  // Set up by Connect, before the phases run; read-only afterwards.
  std::map<std::string, std::unique_ptr<Connection>> connections_;
  // The nodes whose connection is the launch agent's apply session
  // (agent_session.h; owned by connections_), opened as each node connects.
  std::map<std::string, AgentSessionConnection*> sessions_;
  std::map<std::string, std::string> not_there_;  // node → what its transport said
  std::map<std::string, std::unique_ptr<absl::Notification>> cancels_;
  // This apply's job key, written to each node before its first relay or
  // launch.
  JobKeyDelivery job_key_;

  mutable absl::Mutex mu_;
  bool interrupted_ ABSL_GUARDED_BY(mu_) = false;
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
  std::string failure_ ABSL_GUARDED_BY(mu_);
  bool anything_changed_ ABSL_GUARDED_BY(mu_) = false;
  // Something changed besides source files that no check looks at (see
  // NoteSyncChanges): the preflight checks run again.
  bool checked_inputs_changed_ ABSL_GUARDED_BY(mu_) = false;
  std::string chief_key_ ABSL_GUARDED_BY(mu_);
  std::vector<ExtraFile> built_ ABSL_GUARDED_BY(mu_);
  PreflightReport checks_ ABSL_GUARDED_BY(mu_);
  bool checks_reported_ ABSL_GUARDED_BY(mu_) = false;
  Manifest sync_manifest_;  // source_ plus built binaries and the agent
  // While the chief serves the relay: its HOST:PORT, for the others.
  std::string relay_from_;
  // Each relayed node's place in the relay chain (RelayParent), set before
  // the relayed steps start, read-only during them.
  struct RelayLink {
    const NodeSpec* parent = nullptr;
    int children = 0;
  };
  std::map<std::string, RelayLink> relay_links_;
  // What each node recorded, read at once before a relayed sync (written
  // before the steps start, read-only during them).
  std::map<std::string, Manifest> recorded_;
  // The same, read ahead on the nodes other than the chief while apply
  // reads the chief's job state (the first use of each node's file channel
  // overlaps with the chief's).
  std::map<std::string, Manifest> prefetched_;
  std::vector<SyncTraffic> sync_traffic_ ABSL_GUARDED_BY(mu_);
  // Step records as read ahead by PrefetchStepRecords and kept true by what
  // this apply writes: node → phase name → hash ("" : none). Only this
  // apply writes them while it runs.
  std::map<std::string, std::map<std::string, std::string>> step_records_ ABSL_GUARDED_BY(mu_);
  std::string run_id_;      // of the job this apply launches
  // The chief's lock while Run holds it (options_.lock_state).
  std::unique_ptr<ConnectionLockStore> lock_store_;
  std::unique_ptr<StateLock> state_lock_;
  // The chief's job as Run found it, when it had ended (CheckRunningJob).
  std::optional<NodeJobState> ended_job_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_EXECUTOR_H_
