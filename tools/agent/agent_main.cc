// fleetplan-agent: started by apply on every node to run that node's ranks.
//
//   fleetplan-agent --node=NAME --first-rank=N --nproc=K --restarts=R
//       --log-dir=DIR [--grace-period=10s] [--detach]
//       [--nodes=A,B,C --supervisor-port=P | --coordinator=HOST:P]
//       [--heartbeat-timeout=30s] [--hang-timeout=10m] [--key-file=PATH] [--run-id=ID]
//       [--launcher=L]
//       [--local-rank-arg=NAME] [--progress=REGEX]
//       -- PROGRAM ARGS...
//
// The chief's agent (--nodes) coordinates the job; the others connect to it
// (node_agent.h). Exits with the job's status: 0 when every rank of every
// node succeeded, else that of the first failing rank; 2 for bad usage.
// With --detach it runs on in its own session and the command returns 0
// once this node's ranks have started. With $FLEETPLAN_LAUNCH_REPORT set
// too, that word goes to the file it names (first line the status), and the
// command stays until the agent ends, exiting with its status: the task of a
// Slurm job step, whose end would end the agent with it.
//
// For `logs` and `stop`, on the node (job_files.h):
//
//   fleetplan-agent --logs --log-dir=DIR --node=NAME [--run=ID] [--rank=N]
//       [--tail=N] [--follow]
//   fleetplan-agent --stop --log-dir=DIR [--grace-period=10s]
//   fleetplan-agent --stacks --log-dir=DIR --node=NAME
//   fleetplan-agent --top --log-dir=DIR --node=NAME
//
// A node's preflight checks (preflight.h), run in the ranks' environment
// by the plan's shell preamble, which says how the python activation went:
//
//   fleetplan-agent --preflight=JSON [--activation=none|ok|failed]
//       [--activation-output=TEXT]
//
// Its network probes also run on their own (probe.h):
//
//   fleetplan-agent --probe-listen=PORT --probe-expect=N [--probe-timeout=10m]
//   fleetplan-agent --probe-connect=HOST:PORT [--probe-timeout=30s]
//   fleetplan-agent --probe-ifname=ADDRESS
//
// and a sync, to check what arrived (exit 1 naming the files that differ):
//
//   fleetplan-agent --verify-tree=ROOT --manifest=PATH
//
// and, for apply, everything it does on the node during an apply through
// this one process (framed requests on stdin, answers on stdout;
// apply_session.h, tools/protocol/session_wire.h):
//
//   fleetplan-agent --apply-session
//
// and the sync relay (relay.h): the chief serves its synced tree, the
// others fetch what they lack from their parent in the relay chain (the
// chief when it fails), pass it on to their own child as it arrives, and
// check their tree:
//
//   fleetplan-agent --relay-serve=ROOT --manifest=PATH --relay-port=P
//       --relay-expect=N [--watch-stdin]
//   fleetplan-agent --relay-from=HOST:P --relay-from-node=NAME --relay-root=ROOT
//       --manifest=PATH [--relay-fallback=HOST:P --relay-fallback-node=NAME]
//       [--relay-port=P --relay-expect=N] [--relay-expect-digest=HEX] [--relay-all]

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tools/agent/apply_session.h"
#include "tools/agent/job_files.h"
#include "tools/agent/job_stacks.h"
#include "tools/agent/node_top.h"
#include "tools/agent/sync_checks.h"
#include "tools/agent/node_agent.h"
#include "tools/agent/preflight.h"
#include "tools/agent/probe.h"
#include "tools/agent/relay.h"
#include "tools/process/files.h"
#include "tools/protocol/job_state.h"
#include "tools/protocol/preflight_request.h"
#include "tools/secure/job_key.h"
#include "tools/sync/manifest.h"
#include "tools/sync/tree_check.h"
#include "tools/util/flags.h"

ABSL_FLAG(std::string, node, "", "This node's name, for output prefixes and result.json.");
ABSL_FLAG(int, first_rank, 0, "RANK of this node's first rank (LOCAL_RANK 0).");
ABSL_FLAG(int, nproc, 1, "Ranks to start on this node.");
ABSL_FLAG(int, restarts, 0,
          "Whole-job restarts after a failure (like torchrun --max-restarts); the "
          "coordinator's budget.");
ABSL_FLAG(std::string, log_dir, "",
          "Directory for job.json, per-run rank logs, `latest` and agent.log.");
ABSL_FLAG(std::string, run_id, "",
          "The run's id, the same on every node (default: $FLEETPLAN_RUN_ID, else made by "
          "the coordinator).");
ABSL_FLAG(std::string, nodes, "",
          "Coordinator: every node of the job, this one included, comma-separated.");
ABSL_FLAG(int, supervisor_port, 0, "Coordinator: the port the other nodes' agents connect to.");
ABSL_FLAG(std::string, coordinator, "", "Worker: the coordinator's HOST:PORT.");
ABSL_FLAG(std::string, key_file, "",
          "The job's key (64 hex digits in a file of this user's alone, written by apply "
          "through the transport): every connection between agents proves it. Required by "
          "the agents of a job of several nodes and by the relay.");
ABSL_FLAG(absl::Duration, heartbeat_timeout, absl::Seconds(30),
          "Silence from the coordinator (or a worker) after which the job stops.");
ABSL_FLAG(absl::Duration, hang_timeout, absl::ZeroDuration(),
          "No rank of the job progressing this long (output, CPU time, GPU utilization) "
          "makes it hung: every rank's stacks are collected, then the job restarts or fails "
          "with 124. 0: off.");
ABSL_FLAG(std::string, launcher, "torchrun",
          "Whose contract the ranks see: torchrun, distributed-launch, mpirun or deepspeed "
          "(their per-rank variables and local-rank argument; env.sh holds the node's).");
ABSL_FLAG(std::string, local_rank_arg, "",
          "distributed-launch, deepspeed: the local-rank argument's name (default: "
          "--local-rank, --local_rank).");
ABSL_FLAG(bool, detach, false,
          "Run on in a session of its own, output in the logs, and return once this node's "
          "ranks have started.");
ABSL_FLAG(bool, logs, false, "Print this node's rank logs and exit.");
ABSL_FLAG(bool, follow, false, "--logs: keep printing until this node's part of the run ends.");
ABSL_FLAG(std::string, run, "", "--logs: the run to print (default: the latest).");
ABSL_FLAG(int, rank, -1, "--logs: only this rank.");
ABSL_FLAG(int, tail, -1, "--logs: only the last N lines of each rank.");
ABSL_FLAG(bool, stop, false, "Stop the job's agent and ranks on this node and exit.");
ABSL_FLAG(bool, stacks, false,
          "Print where each running rank of this node stands (gdb py-bt and eu-stack attach for "
          "a moment; the job runs on) as one `stacks` message of JSON, and exit.");
ABSL_FLAG(bool, top, false,
          "Print this node's CPU, memory and GPUs and its ranks' CPU, memory, output age and "
          "steps as one line of JSON (tools/protocol/top_report.h), and exit.");
ABSL_FLAG(std::string, progress, "",
          "A regular expression (RE2) whose first group is a rank's step in a line of its "
          "output, beside the trainer's metric lines; what `top` shows.");
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
ABSL_FLAG(std::string, preflight, "",
          "Run this node's preflight checks as this JSON request says "
          "(tools/protocol/preflight_request.h), print a check line each, and exit 1 when "
          "one failed.");
ABSL_FLAG(std::string, activation, "none",
          "--preflight: how the python activation before it went: none, ok or failed.");
ABSL_FLAG(std::string, activation_output, "", "--preflight: what a failed activation printed.");
ABSL_FLAG(std::string, verify_tree, "",
          "Check that this folder holds every file of --manifest as listed and exit.");
ABSL_FLAG(bool, apply_session, false,
          "Serve apply's requests (files, checks, commands) framed on stdin, answering on "
          "stdout, until stdin ends.");
ABSL_FLAG(std::string, manifest, "",
          "The sync manifest --verify-tree checks against, --relay-serve serves, or "
          "--relay-from records.");
ABSL_FLAG(std::string, relay_serve, "",
          "Relay: serve this synced folder to the other nodes' agents and exit once "
          "--relay-expect were served or stdin (--watch-stdin) ends.");
ABSL_FLAG(int, relay_port, 0,
          "Relay: the port --relay-serve listens on; with --relay-from, the port this node "
          "serves its children on while it receives.");
ABSL_FLAG(int, relay_expect, 1,
          "Relay: receivers --relay-serve waits for; with --relay-from and --relay-port, "
          "this node's children.");
ABSL_FLAG(std::string, relay_from, "",
          "Relay: fetch what this node lacks from the relay server at HOST:PORT (its parent) "
          "into --relay-root, record --manifest and check the tree; exit 75 when neither it "
          "nor --relay-fallback can be reached.");
ABSL_FLAG(std::string, relay_from_node, "", "Relay: the parent's node name, for messages.");
ABSL_FLAG(std::string, relay_fallback, "",
          "Relay: HOST:PORT to fetch the rest from when --relay-from cannot be reached or "
          "breaks off (the chief).");
ABSL_FLAG(std::string, relay_fallback_node, "", "Relay: the fallback's node name.");
ABSL_FLAG(std::string, relay_root, "", "Relay: where --relay-from writes.");
ABSL_FLAG(std::string, relay_expect_digest, "",
          "Relay: the digest of the manifest apply synced; another one fails.");
ABSL_FLAG(bool, relay_all, false, "Relay: fetch every file, whatever this node recorded.");
ABSL_FLAG(absl::Duration, probe_timeout, absl::Seconds(30),
          "Probe: how long --probe-listen listens or --probe-connect retries.");

namespace {

int stop_pipe[2] = {-1, -1};

// The job's key from --key-file; nullopt when none was named.
absl::StatusOr<std::optional<fleetplan::JobKey>> ReadKeyFlag() {
  const std::string path = absl::GetFlag(FLAGS_key_file);
  if (path.empty()) return std::optional<fleetplan::JobKey>();
  absl::StatusOr<fleetplan::JobKey> key = fleetplan::ReadJobKeyFile(path);
  if (!key.ok()) return key.status();
  return std::optional<fleetplan::JobKey>(*key);
}

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

// The preflight checks; nullopt when the flags ask for none.
std::optional<int> RunPreflightChecks() {
  const std::string json = absl::GetFlag(FLAGS_preflight);
  if (json.empty()) return std::nullopt;
  absl::StatusOr<fleetplan::PreflightRequest> request = fleetplan::PreflightRequestFromJson(json);
  fleetplan::Activation activation;
  const std::string outcome = absl::GetFlag(FLAGS_activation);
  if (outcome == "ok") activation.outcome = fleetplan::Activation::Outcome::kOk;
  else if (outcome == "failed") activation.outcome = fleetplan::Activation::Outcome::kFailed;
  else if (outcome != "none") request = absl::InvalidArgumentError("--activation: none, ok or failed");
  if (!request.ok()) {
    std::fprintf(stderr, "fleetplan-agent: %s\n", std::string(request.status().message()).c_str());
    return fleetplan::kExitBadInput;
  }
  activation.output = absl::GetFlag(FLAGS_activation_output);
  // A closed stdin would hand its number to a socket, which the chief
  // would then watch for the end of the other nodes' checks.
  if (fcntl(STDIN_FILENO, F_GETFD) < 0) open("/dev/null", O_RDONLY);
  signal(SIGPIPE, SIG_IGN);
  int stop_fd = absl::GetFlag(FLAGS_watch_stdin) ? STDIN_FILENO : -1;
  return fleetplan::RunPreflight(*request, activation, stop_fd, stdout);
}

// Serves or receives a sync relay; nullopt when the flags ask for neither.
std::optional<int> RunRelay() {
  if (absl::GetFlag(FLAGS_relay_serve).empty() && absl::GetFlag(FLAGS_relay_from).empty()) {
    return std::nullopt;
  }
  absl::StatusOr<std::optional<fleetplan::JobKey>> key = ReadKeyFlag();
  if (!key.ok() || !key->has_value()) {
    std::fprintf(stdout, "relay: %s\n",
                 key.ok() ? "no job key (--key-file): the relay talks to the job's nodes only"
                          : std::string(key.status().message()).c_str());
    return fleetplan::kExitBadInput;
  }
  if (std::string root = absl::GetFlag(FLAGS_relay_serve); !root.empty()) {
    fleetplan::RelayServeOptions options;
    options.root = root;
    options.manifest_path = absl::GetFlag(FLAGS_manifest);
    options.key = **key;
    options.port = absl::GetFlag(FLAGS_relay_port);
    options.expect = absl::GetFlag(FLAGS_relay_expect);
    options.stop_fd = absl::GetFlag(FLAGS_watch_stdin) ? STDIN_FILENO : -1;
    return fleetplan::RunRelayServe(options, stdout);
  }
  if (std::string from = absl::GetFlag(FLAGS_relay_from); !from.empty()) {
    fleetplan::RelayReceiveOptions options;
    options.key = **key;
    options.sources.push_back({from, absl::GetFlag(FLAGS_relay_from_node)});
    if (std::string fallback = absl::GetFlag(FLAGS_relay_fallback); !fallback.empty()) {
      options.sources.push_back({fallback, absl::GetFlag(FLAGS_relay_fallback_node)});
    }
    options.serve_port = absl::GetFlag(FLAGS_relay_port);
    options.serve_expect = absl::GetFlag(FLAGS_relay_expect);
    options.root = absl::GetFlag(FLAGS_relay_root);
    options.manifest_path = absl::GetFlag(FLAGS_manifest);
    options.expect_digest = absl::GetFlag(FLAGS_relay_expect_digest);
    options.ignore_recorded = absl::GetFlag(FLAGS_relay_all);
    return fleetplan::RunRelayReceive(options, stdout);
  }
  return std::nullopt;
}

// Checks the tree the flags name against its manifest; nullopt when they
// ask for no check.
std::optional<int> RunVerifyTree() {
  const std::string root = absl::GetFlag(FLAGS_verify_tree);
  if (root.empty()) return std::nullopt;
  fleetplan::TreeCheckReport report =
      fleetplan::CheckSyncedTree(root, absl::GetFlag(FLAGS_manifest));
  std::fprintf(report.status == 0 ? stdout : stderr, "%s\n", report.message.c_str());
  return report.status;
}


// Signals become a readable pipe the agent polls with its ranks. A
// detached agent ignores SIGHUP: the session it was started from may end.
bool InstallStopSignals(bool ignore_hangup) {
  if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    std::perror("fleetplan-agent: pipe");
    return false;
  }
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnStopSignal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  if (ignore_hangup) {
    signal(SIGHUP, SIG_IGN);
  } else {
    sigaction(SIGHUP, &action, nullptr);
  }
  // A closed stdout must not kill the agent before it stops its ranks.
  signal(SIGPIPE, SIG_IGN);
  return true;
}

int RunAgent(fleetplan::NodeAgentOptions options, bool detached = false) {
  if (!InstallStopSignals(detached)) return 1;
  options.stop_fd = stop_pipe[0];
  absl::StatusOr<fleetplan::NodeJobState> result = fleetplan::RunNodeAgent(options);
  if (!result.ok()) {
    std::fprintf(stderr, "fleetplan-agent: %s\n", std::string(result.status().message()).c_str());
    return result.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  return result->exit_status;
}

// The last lines of `path`, for saying why a detached agent ended early.
std::string LastLines(const std::string& path, size_t lines) {
  absl::StatusOr<std::string> text = fleetplan::ReadFileToString(path);
  if (!text.ok()) return "";
  std::vector<absl::string_view> all = absl::StrSplit(*text, '\n', absl::SkipEmpty());
  size_t from = all.size() > lines ? all.size() - lines : 0;
  return absl::StrJoin(all.begin() + from, all.end(), "\n");
}

// What a detached launch says, to `report` when it is a job step's task
// (stdout and stderr otherwise): its status on the first line, then the
// words. False when the report cannot be written.
bool SayLaunched(const std::string& report, int status, const std::string& words) {
  if (report.empty()) {
    std::fprintf(status == 0 ? stdout : stderr, "%s\n", words.c_str());
    std::fflush(nullptr);
    return true;
  }
  absl::Status written =
      fleetplan::WriteFileAtomic(report, absl::StrCat(status, "\n", words, "\n"), 0600);
  if (!written.ok()) {
    std::fprintf(stderr, "fleetplan-agent: %s\n", std::string(written.message()).c_str());
  }
  return written.ok();
}

// The status a job step's task ends with once its agent ended with `code`.
// A bad one ends the step on every node at once (srun --kill-on-bad-exit):
// right for an agent that died (killed, crashed) without the job's end
// written down, whose peers may not know; wrong for a job the agents ended
// among themselves (a rank failed, a stop), whose other agents are writing
// that end down as this one exits. That is 0, with the job's end said.
int StepTaskStatus(const fleetplan::NodeAgentOptions& options, pid_t agent, int code) {
  if (code == 0) return 0;
  absl::StatusOr<std::string> json =
      fleetplan::ReadFileToString(fleetplan::JobStatePath(options.log_dir));
  if (!json.ok()) return code;
  absl::StatusOr<fleetplan::NodeJobState> state = fleetplan::JobStateFromJson(*json);
  if (!state.ok() || !fleetplan::IsFinal(state->phase) || state->agent_pid != agent ||
      (!options.run_id.empty() && state->run_id != options.run_id)) {
    return code;
  }
  std::fprintf(stderr, "%s: the job ended %s (exit %d); this agent ended with it\n",
               options.node.c_str(), std::string(fleetplan::JobPhaseName(state->phase)).c_str(),
               code);
  return 0;
}

// Forks the agent into a session of its own (so the end of the transport's
// session, a closed terminal or a killed apply leaves it running), its
// output in agent.log, and returns once its ranks started: 0 then, else
// the job's status with what the agent said. As a job step's task
// ($FLEETPLAN_LAUNCH_REPORT), it says so in that file instead and waits for
// the agent: the step lives as long as the agent, and the agent's status
// is the task's (srun --kill-on-bad-exit ends the step everywhere on a
// failure).
int RunDetached(fleetplan::NodeAgentOptions options) {
  std::string report;
  if (const char* path = std::getenv("FLEETPLAN_LAUNCH_REPORT"); path != nullptr) {
    report = path;
    unsetenv("FLEETPLAN_LAUNCH_REPORT");  // not the ranks' business
  }
  if (absl::Status made = fleetplan::MakeDirs(options.log_dir); !made.ok()) {
    std::fprintf(stderr, "fleetplan-agent: %s\n", std::string(made.message()).c_str());
    return 1;
  }
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) {
    std::perror("fleetplan-agent: pipe");
    return 1;
  }
  std::string agent_log = fleetplan::AgentLogPath(options.log_dir);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fleetplan-agent: fork");
    return 1;
  }
  if (pid == 0) {
    close(ready[0]);
    setsid();
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int log = open(agent_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (null < 0 || log < 0) _exit(1);
    dup2(null, STDIN_FILENO);
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    options.stdin_fd = -1;
    options.output_fd = STDOUT_FILENO;
    options.echo_rank_output = false;
    int ready_fd = ready[1];
    options.on_started = [ready_fd](bool started) {
      char byte = started ? 'S' : 'E';
      ssize_t ignored = write(ready_fd, &byte, 1);
      (void)ignored;
      close(ready_fd);
    };
    std::fflush(nullptr);
    _exit(RunAgent(options, /*detached=*/true));
  }
  close(ready[1]);
  char byte = 0;
  ssize_t n;
  do {
    n = read(ready[0], &byte, 1);
  } while (n < 0 && errno == EINTR);
  close(ready[0]);
  auto wait_for_agent = [pid] {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  };
  if (n == 1 && byte == 'S') {
    bool said = SayLaunched(report, 0,
                            absl::StrCat(options.node, ": ranks started (agent ", pid, ", run ",
                                         options.run_id.empty() ? "?" : options.run_id, ")"));
    if (report.empty()) return 0;
    // A report nobody can read: the launch would wait for it in vain.
    if (!said) kill(pid, SIGTERM);
    return StepTaskStatus(options, pid, wait_for_agent());
  }
  // The agent ended before its ranks started: its status and last words.
  int code = wait_for_agent();
  if (code == 0) code = 1;
  SayLaunched(report, code, LastLines(agent_log, 20));
  return code;
}

// `--logs` and `--stop`; nullopt when neither was asked for.
std::optional<int> RunStacks() {
  if (!absl::GetFlag(FLAGS_stacks)) return std::nullopt;
  std::string log_dir = absl::GetFlag(FLAGS_log_dir);
  if (log_dir.empty()) {
    std::fprintf(stderr, "fleetplan-agent: --stacks needs --log-dir\n");
    return fleetplan::kExitBadInput;
  }
  absl::StatusOr<fleetplan::StacksMessage> stacks =
      fleetplan::NodeJobStacks(log_dir, absl::GetFlag(FLAGS_node));
  if (!stacks.ok()) {
    std::fprintf(stderr, "fleetplan-agent: %s\n", std::string(stacks.status().message()).c_str());
    return 1;
  }
  std::printf("%s\n", fleetplan::SerializePeerMessage(*stacks).c_str());
  return 0;
}

std::optional<int> RunLogsOrStop() {
  if (absl::GetFlag(FLAGS_logs)) {
    fleetplan::LogsOptions options;
    options.log_dir = absl::GetFlag(FLAGS_log_dir);
    options.node = absl::GetFlag(FLAGS_node);
    options.run_id = absl::GetFlag(FLAGS_run);
    options.rank = absl::GetFlag(FLAGS_rank);
    options.tail = absl::GetFlag(FLAGS_tail);
    options.follow = absl::GetFlag(FLAGS_follow);
    if (options.log_dir.empty() || options.node.empty()) {
      std::fprintf(stderr, "fleetplan-agent: --logs needs --log-dir and --node\n");
      return fleetplan::kExitBadInput;
    }
    signal(SIGPIPE, SIG_IGN);
    absl::StatusOr<int> status = fleetplan::PrintRankLogs(options);
    if (!status.ok()) {
      std::fprintf(stderr, "fleetplan-agent: %s\n", std::string(status.status().message()).c_str());
      return 1;
    }
    return *status;
  }
  if (absl::GetFlag(FLAGS_stop)) {
    std::string log_dir = absl::GetFlag(FLAGS_log_dir);
    if (log_dir.empty()) {
      std::fprintf(stderr, "fleetplan-agent: --stop needs --log-dir\n");
      return fleetplan::kExitBadInput;
    }
    absl::StatusOr<std::string> done =
        fleetplan::StopNodeJob(log_dir, absl::GetFlag(FLAGS_grace_period));
    if (!done.ok()) {
      std::fprintf(stderr, "fleetplan-agent: %s\n", std::string(done.status().message()).c_str());
      return 1;
    }
    std::printf("%s\n", done->c_str());
    return 0;
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Runs this node's ranks of a fleetplan job.\n"
      "  fleetplan-agent --node=NAME --first-rank=N --nproc=K --restarts=R "
      "--log-dir=DIR [--grace-period=10s] [--detach]\n"
      "      [--nodes=A,B --supervisor-port=P | --coordinator=HOST:P] "
      "[--heartbeat-timeout=30s] [--hang-timeout=10m] [--key-file=PATH]\n"
      "      [--launcher=torchrun|distributed-launch|mpirun|deepspeed] [--local-rank-arg=NAME] "
      "[--progress=REGEX] -- PROGRAM ARGS...\n"
      "Reading and stopping the job on this node:\n"
      "  fleetplan-agent --logs --log-dir=DIR --node=NAME [--run=ID] [--rank=N] "
      "[--tail=N] [--follow]\n"
      "  fleetplan-agent --stop --log-dir=DIR [--grace-period=10s]\n"
      "  fleetplan-agent --stacks --log-dir=DIR --node=NAME\n"
      "  fleetplan-agent --top --log-dir=DIR --node=NAME\n"
      "The preflight checks of this node, in the ranks' environment:\n"
      "  fleetplan-agent --preflight=JSON [--activation=none|ok|failed] "
      "[--activation-output=TEXT]\n"
      "Network probes of the preflight checks:\n"
      "  fleetplan-agent --probe-listen=PORT --probe-expect=N [--probe-timeout=10m]\n"
      "  fleetplan-agent --probe-connect=HOST:PORT [--probe-timeout=30s]\n"
      "  fleetplan-agent --probe-ifname=ADDRESS\n"
      "Checking a synced tree against its manifest:\n"
      "  fleetplan-agent --verify-tree=ROOT --manifest=PATH\n"
      "What apply does on this node, through one process (framed on stdin and stdout):\n"
      "  fleetplan-agent --apply-session\n"
      "The sync relay (the chief serves; the others fetch, check and pass on):\n"
      "  fleetplan-agent --relay-serve=ROOT --manifest=PATH --relay-port=P --relay-expect=N "
      "[--watch-stdin]\n"
      "  fleetplan-agent --relay-from=HOST:P --relay-from-node=NAME --relay-root=ROOT "
      "--manifest=PATH [--relay-fallback=HOST:P --relay-fallback-node=NAME] "
      "[--relay-port=P --relay-expect=N] [--relay-expect-digest=HEX] [--relay-all]\n"
      "Flag names may be written with dashes or underscores.");
  absl::StatusOr<std::vector<std::string>> positional =
      fleetplan::ParseMainFlags(argc, argv, __FILE__);
  if (!positional.ok()) {
    std::fprintf(stderr, "fleetplan-agent: %s\n", std::string(positional.status().message()).c_str());
    return fleetplan::kExitBadInput;
  }
  if (absl::GetFlag(FLAGS_apply_session)) {
    return fleetplan::ServeApplySession(STDIN_FILENO, STDOUT_FILENO);
  }
  if (std::optional<int> checked = RunPreflightChecks(); checked.has_value()) return *checked;
  if (std::optional<int> probed = RunProbe(); probed.has_value()) return *probed;
  if (std::optional<int> verified = RunVerifyTree(); verified.has_value()) return *verified;
  if (std::optional<int> relayed = RunRelay(); relayed.has_value()) return *relayed;

  if (std::optional<int> done = RunLogsOrStop(); done.has_value()) return *done;
  if (std::optional<int> done = RunStacks(); done.has_value()) return *done;
  if (absl::GetFlag(FLAGS_top)) {
    return fleetplan::PrintNodeTop({absl::GetFlag(FLAGS_log_dir), absl::GetFlag(FLAGS_node)},
                                   stdout, stderr);
  }

  fleetplan::NodeAgentOptions options;
  options.node = absl::GetFlag(FLAGS_node);
  options.first_rank = absl::GetFlag(FLAGS_first_rank);
  options.nproc = absl::GetFlag(FLAGS_nproc);
  options.restarts = absl::GetFlag(FLAGS_restarts);
  options.log_dir = absl::GetFlag(FLAGS_log_dir);
  options.grace_period = absl::GetFlag(FLAGS_grace_period);
  options.program.assign(positional->begin() + 1, positional->end());
  std::optional<fleetplan::Launcher> launcher =
      fleetplan::ParseLauncher(absl::GetFlag(FLAGS_launcher));
  if (!launcher.has_value()) {
    std::fprintf(stderr, "fleetplan-agent: --launcher=%s: expected one of %s\n",
                 absl::GetFlag(FLAGS_launcher).c_str(),
                 absl::StrJoin(fleetplan::LauncherNames(), ", ").c_str());
    return fleetplan::kExitBadInput;
  }
  options.launcher = {*launcher, absl::GetFlag(FLAGS_local_rank_arg)};
  options.run_id = absl::GetFlag(FLAGS_run_id);
  if (const char* from_env = std::getenv("FLEETPLAN_RUN_ID");
      options.run_id.empty() && from_env != nullptr) {
    options.run_id = from_env;
  }
  if (std::string nodes = absl::GetFlag(FLAGS_nodes); !nodes.empty()) {
    options.nodes = absl::StrSplit(nodes, ',');
  }
  options.supervisor_port = absl::GetFlag(FLAGS_supervisor_port);
  options.coordinator = absl::GetFlag(FLAGS_coordinator);
  options.heartbeat_timeout = absl::GetFlag(FLAGS_heartbeat_timeout);
  options.hang_timeout = absl::GetFlag(FLAGS_hang_timeout);
  options.progress_pattern = absl::GetFlag(FLAGS_progress);
  absl::StatusOr<std::optional<fleetplan::JobKey>> key = ReadKeyFlag();
  if (!key.ok()) {
    std::fprintf(stderr, "fleetplan-agent: %s\n", std::string(key.status().message()).c_str());
    return fleetplan::kExitBadInput;
  }
  options.job_key = *key;
  options.stdin_fd = absl::GetFlag(FLAGS_watch_stdin) ? STDIN_FILENO : -1;
  if (absl::GetFlag(FLAGS_detach)) return RunDetached(options);
  return RunAgent(options);
}
