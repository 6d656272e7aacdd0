// `fleetplan exec`: an ad-hoc command on every node of a spec, in the
// node's environment and workdir, like pdsh or `ansible all -a`.

#include <string>
#include <vector>

#include "tools/cli/exec_command.h"
#include "tools/cli/subcommand_mains.h"
#include "tools/hold/held_connections.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {

int ExecMain(const CommandLine& line) {
  CommandDoc doc;
  doc.usage = {"SPEC.toml [--node=NAME]... [--json] [--parallelism=N] -- COMMAND [ARGS...]"};
  doc.description =
      "Runs a command on every node of the spec (or the named ones) in parallel, in the "
      "node's environment (python activation and the spec's env, as the ranks get them) and "
      "workdir, through the spec's transports; each line of output is prefixed [node].\n\n"
      "One argument is a shell command line ('nvidia-smi | head -5'); several are run as they "
      "are, each one word.";
  doc.examples = {
      {"fleetplan exec cluster.toml -- nvidia-smi", "on every node"},
      {"fleetplan exec cluster.toml --node head -- 'df -h .'", "on one node, through its shell"},
  };
  doc.exit_codes = {kExitOk, kExitBadInput, kExitInterrupted};
  doc.exit_note =
      "when a node's command fails: the lowest failing exit status (255: a node could not be "
      "reached)";
  doc.min_operands = 2;
  doc.max_operands = static_cast<size_t>(-1);
  doc.operands_expected = "expected a spec file and, after --, a command";
  JobTarget target;
  target.connections = &HeldConnections();
  ExecOptions options;
  FlagSet flags(std::move(doc));
  flags.List("node", "NAME", &options.nodes, "Only this node.", ValueKind::kNode);
  flags.Number("parallelism", "N", &options.parallelism, "Nodes to connect to and run on at once.");
  flags.Switch("json", &target.json,
               "Print one JSON object at the end: command, exit_status, nodes (node, "
               "exit_status or error, output).");
  flags.Number("connect-timeout", "SECONDS", &target.transport.connect_timeout_s,
               "How long to wait for a node to answer.");
  std::vector<std::string> operands;
  if (std::optional<int> done = flags.Parse(line, &operands)) return *done;
  if (options.parallelism < 1) {
    std::fprintf(stderr, "fleetplan exec: --parallelism must be at least 1\n");
    return kExitBadInput;
  }
  target.spec = operands[0];
  options.command.assign(operands.begin() + 1, operands.end());
  return RunExecCommand(target, options);
}

}  // namespace fleetplan
