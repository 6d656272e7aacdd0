// `fleetplan logs`: the output of the spec's ranks, read from its nodes.

#include <unistd.h>

#include <string>
#include <vector>

#include "tools/cli/job_commands.h"
#include "tools/cli/subcommand_mains.h"
#include "tools/hold/held_connections.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {

int LogsMain(const CommandLine& line) {
  CommandDoc doc;
  doc.usage = {"[--follow] [--node=NAME]... [--rank=N] [--tail=N] [--run=ID] [--json] SPEC.toml"};
  doc.description =
      "Prints the ranks' output of the spec's job, each line prefixed [node/rank], read from "
      "the nodes through the spec's transports.";
  doc.examples = {
      {"fleetplan logs cluster.toml --follow", "as the ranks write, until the job ends"},
      {"fleetplan logs cluster.toml --node=head --tail=20", "the last lines of one node's ranks"},
  };
  doc.exit_codes = {kExitOk, kExitApplyFailed, kExitBadInput, kExitInterrupted};
  doc.exit_note = "with --follow: the job's status once it ended";
  JobTarget target;
  target.connections = &HeldConnections();
  LogsCommandOptions options;
  FlagSet flags(std::move(doc));
  flags.Group("What to print");
  flags.Switch("follow", &options.follow,
               "Keep printing as the ranks write, until the job ends (Ctrl-C stops following, "
               "not the job).");
  flags.List("node", "NAME", &options.nodes, "Only this node.", ValueKind::kNode);
  flags.Number("rank", "N", &options.rank, "Only this rank (global RANK; -1: every rank).");
  flags.Number("tail", "N", &options.tail, "Only the last N lines of each rank (-1: all).");
  flags.Text("run", "ID", &options.run_id, "The run to print (default: the latest).");
  flags.Group("Output");
  flags.Switch("json", &target.json,
               "Print one JSON object per line: {\"node\", \"rank\", \"line\"}.");
  bool raw = false;
  flags.Switch("raw", &raw,
               "Print the trainer's metric lines as it wrote them (JSON), also on a terminal.");
  flags.Group("Connecting");
  // A node that does not answer is marked unreachable, and what the
  // others know is printed.
  target.tolerate_unreachable = true;
  target.transport.connect_timeout_s = kReadConnectTimeoutS;
  flags.Number("connect-timeout", "SECONDS", &target.transport.connect_timeout_s,
               "How long to wait for a node before marking it unreachable (default 5).");
  std::vector<std::string> operands;
  if (std::optional<int> done = flags.Parse(line, &operands)) return *done;
  target.spec = operands[0];
  options.human = !raw && isatty(STDOUT_FILENO) == 1;
  return RunLogsCommand(target, options);
}

}  // namespace fleetplan
