// `exec`: an ad-hoc command on every node of a spec, in the node's
// environment and workdir, like pdsh or `ansible all -a`.

#include <cstring>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "tools/cli/exec_command.h"
#include "tools/util/flags.h"

ABSL_FLAG(std::vector<std::string>, node, {},
          "Only these nodes (a name; repeat the flag or separate names with commas).");
ABSL_FLAG(bool, json, false,
          "Print one JSON object at the end: command, exit_status, nodes (node, exit_status "
          "or error, output).");
ABSL_FLAG(int, parallelism, 64, "Nodes to connect to and run on at once.");
ABSL_FLAG(int, connect_timeout, 10, "Seconds to wait for a node to answer.");

namespace {

// argv with every `--node NAME` / `--node=NAME` before `--` gathered into
// one `--node=A,B`, since a repeated flag would keep only its last value.
std::vector<std::string> GatherNodeFlags(int argc, char** argv) {
  std::vector<std::string> args = {argv[0]}, names;
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    absl::string_view arg = argv[i];
    if ((arg == "--node" || arg == "-node") && i + 1 < argc) {
      names.push_back(argv[++i]);
    } else if (absl::ConsumePrefix(&arg, "--node=") || absl::ConsumePrefix(&arg, "-node=")) {
      names.emplace_back(arg);
    } else {
      args.emplace_back(arg);
    }
  }
  if (!names.empty()) args.push_back(absl::StrCat("--node=", absl::StrJoin(names, ",")));
  for (; i < argc; ++i) args.emplace_back(argv[i]);
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "runs a command on every node of the spec (or the named ones) in parallel, in the "
      "node's environment (python activation and the spec's env, as the ranks get them) and "
      "workdir, through the spec's transports; each line of output is prefixed [node].\n"
      "usage: exec SPEC.toml [--node NAME]... [--json] [--parallelism=N] -- COMMAND [ARGS...]\n"
      "One argument is a shell command line ('nvidia-smi | head -5'); several are run as "
      "they are, each one word.\n"
      "exit codes: 0 every node's command exited 0; else the lowest failing status (255: a "
      "node could not be reached); 2 bad input; 130 interrupted (the commands are stopped)");
  std::vector<std::string> gathered = GatherNodeFlags(argc, argv);
  std::vector<char*> args;
  for (std::string& arg : gathered) args.push_back(arg.data());
  absl::StatusOr<std::vector<std::string>> positional =
      fleetplan::ParseMainFlags(static_cast<int>(args.size()), args.data(), __FILE__);
  if (!positional.ok() || positional->size() < 3) {
    fprintf(stderr, "exec: %s\n",
            positional.ok() ? "expected a spec file and, after --, a command (see --help)"
                            : std::string(positional.status().message()).c_str());
    return fleetplan::kExitBadInput;
  }
  fleetplan::JobTarget target;
  target.spec = (*positional)[1];
  target.json = absl::GetFlag(FLAGS_json);
  target.transport.connect_timeout_s = absl::GetFlag(FLAGS_connect_timeout);
  fleetplan::ExecOptions options;
  options.nodes = absl::GetFlag(FLAGS_node);
  options.command.assign(positional->begin() + 2, positional->end());
  options.parallelism = absl::GetFlag(FLAGS_parallelism);
  if (options.parallelism < 1) {
    fprintf(stderr, "exec: --parallelism must be at least 1\n");
    return fleetplan::kExitBadInput;
  }
  return fleetplan::RunExecCommand(target, options);
}
