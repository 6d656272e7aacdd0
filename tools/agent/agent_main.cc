// fleetplan-agent: started by apply on every node to run that node's ranks.
//
//   fleetplan-agent --node=NAME --first-rank=N --nproc=K --restarts=R
//       --log-dir=DIR [--grace-period=10s] -- PROGRAM ARGS...
//
// Exits with 0 when every rank succeeded, else with the status of the
// lowest failing rank; 2 for bad usage.
//
// The preflight checks also run it for its network probes (probe.h):
//
//   fleetplan-agent --probe-listen=PORT --probe-expect=N [--probe-timeout=10m]
//   fleetplan-agent --probe-connect=HOST:PORT [--probe-timeout=30s]
//   fleetplan-agent --probe-ifname=ADDRESS
//
// and a sync, to check what arrived (exit 1 naming the files that differ):
//
//   fleetplan-agent --verify-tree=ROOT --manifest=PATH

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_join.h"
#include "tools/agent/probe.h"
#include "tools/agent/supervisor.h"
#include "tools/process/files.h"
#include "tools/sync/manifest.h"
#include "tools/util/flags.h"

ABSL_FLAG(std::string, node, "", "This node's name, for output prefixes and result.json.");
ABSL_FLAG(int, first_rank, 0, "RANK of this node's first rank (LOCAL_RANK 0).");
ABSL_FLAG(int, nproc, 1, "Ranks to start on this node.");
ABSL_FLAG(int, restarts, 0, "Restarts of all ranks after a failure (like torchrun --max-restarts).");
ABSL_FLAG(std::string, log_dir, "", "Directory for per-run rank logs, `latest` and result.json.");
ABSL_FLAG(absl::Duration, grace_period, absl::Seconds(10),
          "How long stopped ranks get between SIGTERM and SIGKILL.");
ABSL_FLAG(bool, watch_stdin, true,
          "Stop all ranks (or the --probe-listen listener) when stdin reaches end-of-file.");
ABSL_FLAG(int, probe_listen, 0,
          "Probe: listen on this port, print the preflight port check, accept "
          "--probe-expect connections, and exit.");
ABSL_FLAG(int, probe_expect, 1, "Probe: connections --probe-listen waits for.");
ABSL_FLAG(std::string, probe_connect, "",
          "Probe: connect to HOST:PORT (retrying until --probe-timeout) and exit.");
ABSL_FLAG(std::string, probe_ifname, "",
          "Probe: print the interface that holds this address and exit.");
ABSL_FLAG(std::string, verify_tree, "",
          "Check that this folder holds every file of --manifest as listed and exit.");
ABSL_FLAG(std::string, manifest, "", "The sync manifest --verify-tree checks against.");
ABSL_FLAG(absl::Duration, probe_timeout, absl::Seconds(30),
          "Probe: how long --probe-listen listens or --probe-connect retries.");

namespace {

int stop_pipe[2] = {-1, -1};

void OnStopSignal(int) {
  char byte = 1;
  ssize_t ignored = write(stop_pipe[1], &byte, 1);
  (void)ignored;
}

// Runs the probe the flags ask for; nullopt when they ask for none.
std::optional<int> RunProbe() {
  if (int port = absl::GetFlag(FLAGS_probe_listen); port != 0) {
    fleetplan::ListenProbeOptions options;
    options.port = port;
    options.expect = absl::GetFlag(FLAGS_probe_expect);
    options.timeout = absl::GetFlag(FLAGS_probe_timeout);
    options.stop_fd = absl::GetFlag(FLAGS_watch_stdin) ? STDIN_FILENO : -1;
    return fleetplan::RunListenProbe(options, stdout);
  }
  absl::StatusOr<std::string> answer;
  if (std::string target = absl::GetFlag(FLAGS_probe_connect); !target.empty()) {
    answer = fleetplan::ConnectProbe(target, absl::GetFlag(FLAGS_probe_timeout));
  } else if (std::string address = absl::GetFlag(FLAGS_probe_ifname); !address.empty()) {
    answer = fleetplan::InterfaceHolding(address);
  } else {
    return std::nullopt;
  }
  if (!answer.ok()) {
    std::fprintf(stderr, "%s\n", std::string(answer.status().message()).c_str());
    return answer.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  std::printf("%s\n", answer->c_str());
  return 0;
}

// Checks the tree the flags name against its manifest; nullopt when they
// ask for no check.
std::optional<int> RunVerifyTree() {
  const std::string root = absl::GetFlag(FLAGS_verify_tree);
  if (root.empty()) return std::nullopt;
  const std::string manifest_path = absl::GetFlag(FLAGS_manifest);
  absl::StatusOr<std::string> text = fleetplan::ReadFileToString(manifest_path);
  absl::StatusOr<fleetplan::Manifest> manifest =
      text.ok() ? fleetplan::ParseManifest(*text) : text.status();
  if (!manifest.ok()) {
    std::fprintf(stderr, "cannot check %s: %s: %s\n", root.c_str(), manifest_path.c_str(),
                 std::string(manifest.status().message()).c_str());
    return 1;
  }
  std::vector<std::string> mismatches = fleetplan::FindTreeMismatches(root, *manifest);
  if (mismatches.empty()) {
    std::printf("%zu files as listed\n", manifest->entries.size());
    return 0;
  }
  constexpr size_t kNamed = 10;
  std::string named = absl::StrJoin(mismatches.begin(),
                                    mismatches.begin() + std::min(kNamed, mismatches.size()), ", ");
  std::fprintf(stderr, "%zu of %zu files differ from what was sent: %s%s\n", mismatches.size(),
               manifest->entries.size(), named.c_str(),
               mismatches.size() > kNamed ? ", ..." : "");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Runs this node's ranks of a fleetplan job.\n"
      "  fleetplan-agent --node=NAME --first-rank=N --nproc=K --restarts=R "
      "--log-dir=DIR [--grace-period=10s] -- PROGRAM ARGS...\n"
      "Network probes of the preflight checks:\n"
      "  fleetplan-agent --probe-listen=PORT --probe-expect=N [--probe-timeout=10m]\n"
      "  fleetplan-agent --probe-connect=HOST:PORT [--probe-timeout=30s]\n"
      "  fleetplan-agent --probe-ifname=ADDRESS\n"
      "Checking a synced tree against its manifest:\n"
      "  fleetplan-agent --verify-tree=ROOT --manifest=PATH\n"
      "Flag names may be written with dashes or underscores.");
  absl::StatusOr<std::vector<std::string>> positional =
      fleetplan::ParseMainFlags(argc, argv, __FILE__);
  if (!positional.ok()) {
    std::fprintf(stderr, "fleetplan-agent: %s\n", std::string(positional.status().message()).c_str());
    return fleetplan::kExitBadInput;
  }
  if (std::optional<int> probed = RunProbe(); probed.has_value()) return *probed;
  if (std::optional<int> verified = RunVerifyTree(); verified.has_value()) return *verified;

  fleetplan::SupervisorOptions options;
  options.node = absl::GetFlag(FLAGS_node);
  options.first_rank = absl::GetFlag(FLAGS_first_rank);
  options.nproc = absl::GetFlag(FLAGS_nproc);
  options.restarts = absl::GetFlag(FLAGS_restarts);
  options.log_dir = absl::GetFlag(FLAGS_log_dir);
  options.grace_period = absl::GetFlag(FLAGS_grace_period);
  options.program.assign(positional->begin() + 1, positional->end());
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
