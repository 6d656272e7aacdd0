// `fleetplan top`: a live view of every node and rank of the spec's job.

#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/cli/subcommand_mains.h"
#include "tools/cli/top_command.h"
#include "tools/cli/top_view.h"
#include "tools/hold/held_connections.h"
#include "tools/util/exit_codes.h"
#include "tools/util/flags.h"

namespace fleetplan {

int TopMain(const CommandLine& line) {
  CommandDoc doc;
  doc.usage = {"[--once] [--json] [--interval=SECONDS] [--connect-timeout=SECONDS] SPEC.toml"};
  doc.description = absl::StrCat(
      "Shows every node's CPU, memory and GPUs and every rank's state, CPU, resident memory, "
      "time since it last wrote, step and steps per second, refreshed every 2 seconds; q or "
      "Ctrl-C quits. Each node's agent takes the figures on its node (/proc, nvidia-smi on "
      "the ranks' PATH), read through the spec's transports, one short command per node, "
      "all at once. A figure that could not be read is ? (null in JSON), never 0; a node "
      "without nvidia-smi shows no GPUs. Steps come from the trainer's metric lines and, for "
      "any program, from [job] progress.\n\nStragglers are marked: ",
      StragglerRule(), ".");
  doc.examples = {
      {"fleetplan top cluster.toml", "the live view (full screen on a terminal)"},
      {"fleetplan top cluster.toml --once", "one frame, then exit"},
      {"fleetplan top cluster.toml --json | jq .nodes[].gpus", "one JSON object per refresh"},
  };
  doc.exit_codes = {kExitOk, kExitApplyFailed, kExitBadInput, kExitInterrupted};
  doc.exit_note = "1: with --once, a node could not be read";
  JobTarget target;
  target.connections = &HeldConnections();
  TopOptions options;
  int interval_s = 2;
  FlagSet flags(std::move(doc));
  flags.Group("Output");
  flags.Switch("once", &options.once, "Print one frame (or one JSON object) and exit.");
  flags.Switch("json", &target.json,
               "Print one JSON object per refresh, on a line of its own: state, run_id, "
               "generation, nodes (name, cpu_percent, memory_bytes, gpus, ranks), in bytes and "
               "seconds.");
  flags.Number("interval", "SECONDS", &interval_s, "Seconds between refreshes (1 to 3600).");
  flags.Choice("color", &target.color, {"auto", "always", "never"}, "Colour the stragglers.");
  flags.Group("Connecting");
  // A node that does not answer is marked unreachable, and what the
  // others know is printed.
  target.tolerate_unreachable = true;
  target.transport.connect_timeout_s = kReadConnectTimeoutS;
  flags.Number("connect-timeout", "SECONDS", &target.transport.connect_timeout_s,
               "How long to wait for a node before marking it unreachable (default 5).");
  std::vector<std::string> operands;
  if (std::optional<int> done = flags.Parse(line, &operands)) return *done;
  if (interval_s < 1 || interval_s > 3600) {
    std::fprintf(stderr, "fleetplan top: --interval must be 1 to 3600 seconds, not %d\n",
                 interval_s);
    return kExitBadInput;
  }
  target.spec = operands[0];
  options.interval = absl::Seconds(interval_s);
  options.screen = isatty(STDOUT_FILENO) == 1 && isatty(STDIN_FILENO) == 1;
  options.color = UseColor(target.color, STDOUT_FILENO).value_or(false);
  return RunTopCommand(target, options);
}

}  // namespace fleetplan
