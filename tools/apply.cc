// `apply`: does what `plan` shows — builds the program, distributes keys,
// syncs the sources, writes each node's environment, checks the nodes and
// launches the job on all of them (detached agents, supervised by the
// chief's), then follows it and exits with its status. `--detach` returns
// once every rank has started.

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "tools/cli/commands.h"
#include "tools/util/flags.h"

ABSL_FLAG(int, parallelism, 10, "Run at most this many nodes' steps at once.");
ABSL_FLAG(bool, force, false, "Run every step, even those the nodes have done already.");
ABSL_FLAG(bool, json, false, "Print progress as JSON event lines.");
ABSL_FLAG(bool, detach, false,
          "Return once every rank has started, printing the run id; the job runs on "
          "without apply (see status, logs, stop).");
ABSL_FLAG(bool, replace, false,
          "When a job of this spec still runs, stop it first, then apply.");
ABSL_FLAG(std::string, color, "auto", "Colour the output: auto, always or never.");
ABSL_FLAG(bool, accept_new_host_keys, false,
          "ssh: add unknown host keys to known_hosts instead of refusing them "
          "(changed keys are always refused).");
ABSL_FLAG(absl::Duration, step_timeout, absl::Minutes(10),
          "Stop a command of a step on a node that runs longer than this (e.g. "
          "90s, 20m; 0: no limit) and fail the step; the job itself is not bound.");
ABSL_FLAG(int, connect_timeout, 10, "Seconds to wait for a node to answer.");
ABSL_FLAG(bool, destroy, false,
          "Remove what apply created for each node (e.g. docker containers) and exit.");
ABSL_FLAG(absl::Duration, lock_timeout, absl::ZeroDuration(),
          "When another apply, stop or destroy of the spec holds its lock (the chief's "
          ".fleetplan/apply.lock), wait this long for it (e.g. 30s, 5m) before giving up "
          "with exit code 73; 0: give up at once.");
ABSL_FLAG(bool, force_unlock, false,
          "Remove the spec's lock, whoever holds it, say whose it was, and exit. For a lock "
          "left by an apply that ended without releasing it on another machine (one on "
          "this machine whose process is gone is taken over by itself).");
ABSL_FLAG(std::string, workspace, "",
          "The Bazel workspace to build in (default: the one `bazel run` names, "
          "else the current directory).");
ABSL_FLAG(std::string, agent, "",
          "The fleetplan-agent binary to ship (default: the one in apply's runfiles).");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "applies a cluster spec or a saved plan: builds, syncs, configures and "
      "starts the job on every node, follows it and exits with the job's status.\n"
      "usage: apply [flags] SPEC.toml | PLAN.json\n"
      "Ctrl-C stops the job on every node; a lost connection leaves it running.\n"
      "exit codes: 0 done, 1 apply failed (or the failing rank's status), "
      "2 bad input or stale plan, 73 the spec is locked by another apply, stop or destroy "
      "(the message names who holds it), 75 detached (connection lost; the job goes on), "
      "130 interrupted or stopped");
  absl::StatusOr<std::vector<std::string>> positional =
      fleetplan::ParseMainFlags(argc, argv, __FILE__);
  if (!positional.ok()) {
    fprintf(stderr, "apply: %s\n", std::string(positional.status().message()).c_str());
    return fleetplan::kExitBadInput;
  }
  if (positional->size() != 2) {
    fprintf(stderr, "apply: expected one spec or saved plan (see --help)\n");
    return fleetplan::kExitBadInput;
  }
  fleetplan::ApplyCommand command;
  command.target = (*positional)[1];
  command.argv0 = argv[0];
  command.json = absl::GetFlag(FLAGS_json);
  command.color = absl::GetFlag(FLAGS_color);
  command.destroy = absl::GetFlag(FLAGS_destroy);
  command.force_unlock = absl::GetFlag(FLAGS_force_unlock);
  command.options.lock_timeout = absl::GetFlag(FLAGS_lock_timeout);
  command.workspace = absl::GetFlag(FLAGS_workspace);
  command.agent = absl::GetFlag(FLAGS_agent);
  command.options.parallelism = absl::GetFlag(FLAGS_parallelism);
  command.options.force = absl::GetFlag(FLAGS_force);
  command.options.detach = absl::GetFlag(FLAGS_detach);
  command.options.replace = absl::GetFlag(FLAGS_replace);
  command.options.transport.connect_timeout_s = absl::GetFlag(FLAGS_connect_timeout);
  command.options.step_timeout = absl::GetFlag(FLAGS_step_timeout);
  command.options.transport.accept_new_host_keys =
      absl::GetFlag(FLAGS_accept_new_host_keys);
  return fleetplan::RunApplyCommand(command);
}
