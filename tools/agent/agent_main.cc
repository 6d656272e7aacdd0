// fleetplan-agent: started by apply on every node to run that node's ranks.
//
//   fleetplan-agent --node=NAME --first-rank=N --nproc=K --restarts=R \
//       --log-dir=DIR [--grace-period=10s] -- PROGRAM ARGS...
//
// Exits with 0 when every rank succeeded, else with the status of the
// lowest failing rank; 2 for bad usage.

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "tools/agent/supervisor.h"

ABSL_FLAG(std::string, node, "", "This node's name, for output prefixes and result.json.");
ABSL_FLAG(int, first_rank, 0, "RANK of this node's first rank (LOCAL_RANK 0).");
ABSL_FLAG(int, nproc, 1, "Ranks to start on this node.");
ABSL_FLAG(int, restarts, 0, "Restarts of all ranks after a failure (like torchrun --max-restarts).");
ABSL_FLAG(std::string, log_dir, "", "Directory for per-run rank logs, `latest` and result.json.");
ABSL_FLAG(absl::Duration, grace_period, absl::Seconds(10),
          "How long stopped ranks get between SIGTERM and SIGKILL.");
ABSL_FLAG(bool, watch_stdin, true, "Stop all ranks when stdin reaches end-of-file.");

namespace {

int stop_pipe[2] = {-1, -1};

void OnStopSignal(int) {
  char byte = 1;
  ssize_t ignored = write(stop_pipe[1], &byte, 1);
  (void)ignored;
}

// apply passes flags with dashes (--first-rank); Abseil names them with
// underscores. Rewrites flag names before `--`; the program's argv is left
// alone.
std::vector<char*> UnderscoreFlagNames(int argc, char** argv,
                                       std::vector<std::string>* storage) {
  storage->reserve(argc);
  std::vector<char*> out;
  bool in_flags = true;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") in_flags = false;
    if (in_flags && i > 0 && arg.rfind("--", 0) == 0) {
      size_t end = std::min(arg.find('='), arg.size());
      for (size_t k = 2; k < end; ++k) {
        if (arg[k] == '-') arg[k] = '_';
      }
    }
    storage->push_back(arg);
    out.push_back(storage->back().data());
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Runs this node's ranks of a fleetplan job.\n"
      "  fleetplan-agent --node=NAME --first-rank=N --nproc=K --restarts=R "
      "--log-dir=DIR [--grace-period=10s] -- PROGRAM ARGS...\n"
      "Flag names may be written with dashes or underscores.");
  // --help lists the flags of this file (Abseil looks for a file named
  // after the binary by default).
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "agent_main.cc");
  };
  absl::SetFlagsUsageConfig(usage);
  std::vector<std::string> storage;
  std::vector<char*> args = UnderscoreFlagNames(argc, argv, &storage);
  std::vector<char*> positional = absl::ParseCommandLine(static_cast<int>(args.size()), args.data());

  fleetplan::SupervisorOptions options;
  options.node = absl::GetFlag(FLAGS_node);
  options.first_rank = absl::GetFlag(FLAGS_first_rank);
  options.nproc = absl::GetFlag(FLAGS_nproc);
  options.restarts = absl::GetFlag(FLAGS_restarts);
  options.log_dir = absl::GetFlag(FLAGS_log_dir);
  options.grace_period = absl::GetFlag(FLAGS_grace_period);
  options.program.assign(positional.begin() + 1, positional.end());
  options.stdin_fd = absl::GetFlag(FLAGS_watch_stdin) ? STDIN_FILENO : -1;

  // Signals become a readable pipe the supervisor polls with the ranks.
  if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    std::perror("fleetplan-agent: pipe");
    return 1;
  }
  options.stop_fd = stop_pipe[0];
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnStopSignal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGHUP, &action, nullptr);
  // A closed stdout must not kill the agent before it stops its ranks.
  signal(SIGPIPE, SIG_IGN);

  auto result = fleetplan::RunSupervisor(options);
  if (!result.ok()) {
    std::fprintf(stderr, "fleetplan-agent: %s\n", std::string(result.status().message()).c_str());
    return result.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  return result->status;
}
