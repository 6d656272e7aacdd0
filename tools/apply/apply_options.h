#ifndef FLEETPLAN_TOOLS_APPLY_APPLY_OPTIONS_H_
#define FLEETPLAN_TOOLS_APPLY_APPLY_OPTIONS_H_

// What apply is told (ApplyOptions) and what it answers (ApplyResult; its
// exit codes are tools/util/exit_codes.h's): shared by the executor and the
// runners of its steps.

#include <functional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "plugins/transport.h"
#include "tools/spec/cluster_spec.h"
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

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_APPLY_OPTIONS_H_
