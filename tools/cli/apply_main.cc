// `fleetplan apply`: does what `plan` shows — builds the program, distributes
// keys, syncs the sources, writes each node's environment, checks the nodes
// and launches the job on all of them (detached agents, supervised by the
// chief's), then follows it and exits with its status. `--detach` returns
// once every rank has started.

#include <string>
#include <vector>

#include "tools/cli/commands.h"
#include "tools/cli/subcommand_mains.h"
#include "tools/hold/held_connections.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {
namespace {

CommandDoc ApplyDoc() {
  CommandDoc doc;
  doc.usage = {"[options] SPEC.toml", "[options] PLAN.json", "--destroy SPEC.toml"};
  doc.description =
      "Builds the program (a Bazel label is built in its workspace: run inside it or pass "
      "--workspace), distributes keys, syncs the sources, writes each node's environment, "
      "checks the nodes and starts the job on all of them, then follows it, printing each "
      "rank's output prefixed [node/rank], and exits with the job's status.\n\n"
      "Steps a node has already done are skipped. Ctrl-C stops the job on every node; a "
      "lost connection leaves it running (see status, logs, stop).";
  doc.examples = {
      {"fleetplan apply cluster.toml", "do it, start training and follow the job"},
      {"fleetplan apply cluster.toml --detach", "return once every rank runs"},
      {"fleetplan apply plan.json", "exactly a saved plan; refused if stale"},
      {"fleetplan apply cluster.toml --destroy", "remove what apply created (containers)"},
  };
  doc.exit_codes = {kExitOk,     kExitApplyFailed, kExitBadInput,
                    kExitLocked, kExitDetached,    kExitInterrupted};
  doc.exit_note = "when the job fails: the exit status of its first failing rank";
  doc.operands = OperandKind::kSpecOrPlan;
  doc.operands_expected = "expected one spec or saved plan";
  return doc;
}

}  // namespace

int ApplyMain(const CommandLine& line) {
  ApplyCommand command;
  command.connections = &HeldConnections();
  ApplyOptions& options = command.options;
  FlagSet flags(ApplyDoc());
  flags.Group("Running");
  flags.Number("parallelism", "N", &options.parallelism,
               "Run at most N nodes' steps at once.");
  flags.Switch("force", &options.force,
               "Run every step, even those the nodes have done already.");
  flags.Switch("detach", &options.detach,
               "Return once every rank has started, printing the run id; the job runs on "
               "without apply (see status, logs, stop).");
  flags.Switch("replace", &options.replace,
               "When a job of this spec still runs, stop it first, then apply.");
  flags.Duration("step-timeout", &options.step_timeout,
                 "Stop a command of a step on a node that runs longer than this (e.g. 90s, "
                 "20m; 0: no limit) and fail the step; the job itself is not bound.");
  flags.Duration("lock-timeout", &options.lock_timeout,
                 "When another apply, stop or destroy of the spec holds its lock (the chief's "
                 ".fleetplan/apply.lock), wait this long for it (e.g. 30s, 5m) before giving "
                 "up with exit code 73; 0: give up at once.");
  flags.Group("Output");
  flags.Switch("json", &command.json, "Print progress as JSON event lines.");
  flags.Choice("color", &command.color, {"auto", "always", "never"}, "Colour the output.");
  flags.Group("Connecting");
  flags.Number("connect-timeout", "SECONDS", &options.transport.connect_timeout_s,
               "How long to wait for a node to answer.");
  flags.Switch("accept-new-host-keys", &options.transport.accept_new_host_keys,
               "ssh: add unknown host keys to known_hosts instead of refusing them (changed "
               "keys are always refused).");
  flags.Group("Instead of applying");
  flags.Switch("destroy", &command.destroy,
               "Remove what apply created for each node (e.g. docker containers) and exit.");
  flags.Switch("force-unlock", &command.force_unlock,
               "Remove the spec's lock, whoever holds it, say whose it was, and exit. For a "
               "lock left by an apply that ended without releasing it on another machine (one "
               "on this machine whose process is gone is taken over by itself).");
  flags.Group("Where things are");
  flags.Text("workspace", "DIR", &command.workspace,
             "The Bazel workspace a program given as a label is built in (default: the one "
             "`bazel run` names, else the workspace the current directory is in).",
             ValueKind::kDirectory);
  flags.Text("agent", "FILE", &command.agent,
             "The fleetplan-agent binary to ship (default: the one installed beside "
             "fleetplan, or in its Bazel runfiles).",
             ValueKind::kFile);
  std::vector<std::string> operands;
  if (std::optional<int> done = flags.Parse(line, &operands)) return *done;
  command.target = operands[0];
  command.argv0 = line.argv0;
  return RunApplyCommand(command);
}

}  // namespace fleetplan
