// fleetplan-agent: fleetplan's agent on a node, started by fleetplan to run
// the node's ranks and everything else fleetplan does there. Its
// subcommands, as ninja's -t tools, are one table below: a name and a
// description from their typed definition (tools/protocol/agent_command.h,
// which also writes and parses their options), and a function here.
// `fleetplan-agent help` prints every subcommand and its options.
//
// Exit status: a subcommand's own (launch: the job's, 0 when every rank of
// every node succeeded, else that of the first failing rank); 2 for a
// command line it does not take.

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tools/agent/apply_session.h"
#include "tools/agent/detached_launch.h"
#include "tools/agent/job_files.h"
#include "tools/agent/job_stacks.h"
#include "tools/agent/node_agent.h"
#include "tools/agent/node_top.h"
#include "tools/agent/preflight.h"
#include "tools/agent/probe.h"
#include "tools/agent/relay.h"
#include "tools/agent/slurm_launch.h"
#include "tools/agent/sync_checks.h"
#include "tools/protocol/agent_command.h"
#include "tools/protocol/peer_message.h"
#include "tools/secure/job_key.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {
namespace {

// What went wrong, on stderr; `code` returned.
int Fail(const absl::Status& status, int code = 1) {
  std::fprintf(stderr, "fleetplan-agent: %s\n", std::string(status.message()).c_str());
  return code;
}

// The job's key in `path`; nullopt when no path was given.
absl::StatusOr<std::optional<JobKey>> ReadKey(const std::string& path) {
  if (path.empty()) return std::optional<JobKey>();
  absl::StatusOr<JobKey> key = ReadJobKeyFile(path);
  if (!key.ok()) return key.status();
  return std::optional<JobKey>(*key);
}

int Launch(const AgentLaunch& command) {
  if (!command.private_dir.empty() && chmod(command.private_dir.c_str(), 0700) != 0) {
    return Fail(absl::ErrnoToStatus(errno, absl::StrCat("cannot make ", command.private_dir,
                                                        " this user's alone (chmod 700)")));
  }
  NodeAgentOptions options;
  options.request = command;
  if (command.supervision.rejoins) options.rejoin_window = kRejoinWindow;
  absl::StatusOr<std::optional<JobKey>> key = ReadKey(command.key_file);
  if (!key.ok()) return Fail(key.status(), kExitBadInput);
  options.job_key = *key;
  options.stdin_fd = command.watch_stdin ? STDIN_FILENO : -1;
  if (command.detach) return RunDetached(options);
  return RunForeground(options);
}

int Logs(const AgentLogs& command) {
  LogsOptions options;
  options.log_dir = command.log_dir;
  options.node = command.node;
  options.run_id = command.run_id;
  options.rank = command.rank;
  options.tail = command.tail;
  options.follow = command.follow;
  signal(SIGPIPE, SIG_IGN);
  absl::StatusOr<int> status = PrintRankLogs(options);
  if (!status.ok()) return Fail(status.status());
  return *status;
}

int Stop(const AgentStop& command) {
  absl::StatusOr<std::string> done = StopNodeJob(command.log_dir, command.grace_period);
  if (!done.ok()) return Fail(done.status());
  std::printf("%s\n", done->c_str());
  return 0;
}

int Stacks(const AgentStacks& command) {
  absl::StatusOr<StacksMessage> stacks = NodeJobStacks(command.log_dir, command.node);
  if (!stacks.ok()) return Fail(stacks.status());
  std::printf("%s\n", SerializePeerMessage(*stacks).c_str());
  return 0;
}

int Top(const AgentTop& command) {
  return PrintNodeTop({command.log_dir, command.node}, stdout, stderr);
}

int Preflight(const AgentPreflight& command) {
  Activation activation;
  if (command.activation == "ok") activation.outcome = Activation::Outcome::kOk;
  if (command.activation == "failed") activation.outcome = Activation::Outcome::kFailed;
  activation.output = command.activation_output;
  // A closed stdin would hand its number to a socket, which the chief
  // would then watch for the end of the other nodes' checks.
  if (fcntl(STDIN_FILENO, F_GETFD) < 0) open("/dev/null", O_RDONLY);
  signal(SIGPIPE, SIG_IGN);
  return RunPreflight(command.request, activation, command.watch_stdin ? STDIN_FILENO : -1,
                      stdout);
}

int ProbeListen(const AgentProbeListen& command) {
  ListenProbeOptions options;
  options.port = command.port;
  options.expect = command.expect;
  options.timeout = command.timeout;
  options.stop_fd = command.watch_stdin ? STDIN_FILENO : -1;
  return RunListenProbe(options, stdout);
}

// A probe's answer on stdout, or its error (2 for a malformed address).
int PrintAnswer(const absl::StatusOr<std::string>& answer) {
  if (!answer.ok()) {
    std::fprintf(stderr, "%s\n", std::string(answer.status().message()).c_str());
    return answer.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  std::printf("%s\n", answer->c_str());
  return 0;
}

int ProbeConnect(const AgentProbeConnect& command) {
  return PrintAnswer(ConnectProbe(command.target, command.timeout));
}

int ProbeIfname(const AgentProbeIfname& command) {
  return PrintAnswer(InterfaceHolding(command.address));
}

int VerifyTree(const AgentVerifyTree& command) {
  TreeCheckReport report = CheckSyncedTree(command.root, command.manifest);
  std::fprintf(report.status == 0 ? stdout : stderr, "%s\n", report.message.c_str());
  return report.status;
}

int Session(const AgentSession& command) {
  return ServeApplySession(STDIN_FILENO, STDOUT_FILENO, command.idle_timeout);
}

// The relay's key, required: said on stdout, where apply reads the relay.
std::optional<JobKey> RelayKey(const std::string& path) {
  absl::StatusOr<std::optional<JobKey>> key = ReadKey(path);
  if (key.ok() && key->has_value()) return **key;
  std::fprintf(stdout, "relay: %s\n",
               key.ok() ? "no job key (--key-file): the relay talks to the job's nodes only"
                        : std::string(key.status().message()).c_str());
  return std::nullopt;
}

int RelayServe(const AgentRelayServe& command) {
  RelayServeOptions options;
  options.key = RelayKey(command.key_file);
  if (!options.key.has_value()) return kExitBadInput;
  options.root = command.root;
  options.manifest_path = command.manifest;
  options.port = command.port;
  options.expect = command.expect;
  options.stop_fd = command.watch_stdin ? STDIN_FILENO : -1;
  return RunRelayServe(options, stdout);
}

int RelayFetch(const AgentRelayFetch& command) {
  RelayReceiveOptions options;
  options.key = RelayKey(command.key_file);
  if (!options.key.has_value()) return kExitBadInput;
  options.sources.push_back({command.from, command.from_node});
  if (!command.fallback.empty()) {
    options.sources.push_back({command.fallback, command.fallback_node});
  }
  options.serve_port = command.port;
  options.serve_expect = command.expect;
  options.root = command.root;
  options.manifest_path = command.manifest;
  options.expect_digest = command.expect_digest;
  options.ignore_recorded = command.all;
  return RunRelayReceive(options, stdout);
}

// The launch script comes on stdin.
int SlurmRequest(const AgentSlurmRequest& command) {
  std::string script;
  char buffer[64 * 1024];
  ssize_t n;
  while ((n = read(STDIN_FILENO, buffer, sizeof(buffer))) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) script.append(buffer, n);
  }
  if (n < 0) return Fail(absl::InternalError(absl::StrCat("reading stdin: ", strerror(errno))));
  return HandLaunchToHolder(command, script, stderr);
}

int SlurmAwait(const AgentSlurmAwait& command) { return AwaitLaunchReport(command, stdout); }

// One row of the subcommand table; its options' usage from their
// declaration.
struct AgentTool {
  const char* name;
  const char* description;
  int (*function)(const AgentCommand& command);
  std::string (*options)();
};

template <typename T, int (*Run)(const T&)>
int Call(const AgentCommand& command) {
  return Run(std::get<T>(command));
}

template <typename T, int (*Run)(const T&)>
constexpr AgentTool Tool() {
  return {T::kName, T::kSummary, &Call<T, Run>, &OptionsUsage<T>};
}

constexpr AgentTool kTools[] = {
    Tool<AgentLaunch, Launch>(),           Tool<AgentLogs, Logs>(),
    Tool<AgentStop, Stop>(),               Tool<AgentStacks, Stacks>(),
    Tool<AgentTop, Top>(),                 Tool<AgentPreflight, Preflight>(),
    Tool<AgentProbeListen, ProbeListen>(), Tool<AgentProbeConnect, ProbeConnect>(),
    Tool<AgentProbeIfname, ProbeIfname>(), Tool<AgentVerifyTree, VerifyTree>(),
    Tool<AgentSession, Session>(),         Tool<AgentRelayServe, RelayServe>(),
    Tool<AgentRelayFetch, RelayFetch>(),   Tool<AgentSlurmRequest, SlurmRequest>(),
    Tool<AgentSlurmAwait, SlurmAwait>(),
};
static_assert(std::size(kTools) == std::variant_size_v<AgentCommand>,
              "every subcommand of tools/protocol/agent_command.h has a row");

std::string Usage() {
  std::string usage =
      "fleetplan-agent SUBCOMMAND [--option=value...]: fleetplan's agent on a node, started "
      "by fleetplan.\n";
  for (const AgentTool& tool : kTools) {
    absl::StrAppend(&usage, "\n  fleetplan-agent ", tool.name, "\n      ", tool.description,
                    "\n", tool.options());
  }
  return usage;
}

}  // namespace
}  // namespace fleetplan

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::fputs(fleetplan::Usage().c_str(), args.empty() ? stderr : stdout);
    return args.empty() ? fleetplan::kExitBadInput : 0;
  }
  absl::StatusOr<fleetplan::AgentCommand> command = fleetplan::ParseAgentCommand(args);
  if (!command.ok()) {
    return fleetplan::Fail(
        absl::Status(command.status().code(),
                     absl::StrCat(command.status().message(),
                                  " (fleetplan-agent help: the subcommands and their options)")),
        fleetplan::kExitBadInput);
  }
  for (const fleetplan::AgentTool& tool : fleetplan::kTools) {
    if (tool.name == fleetplan::AgentCommandName(*command)) return tool.function(*command);
  }
  return fleetplan::Fail(absl::InternalError("a subcommand without a row"));
}
