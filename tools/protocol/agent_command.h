#ifndef FLEETPLAN_TOOLS_PROTOCOL_AGENT_COMMAND_H_
#define FLEETPLAN_TOOLS_PROTOCOL_AGENT_COMMAND_H_

// What fleetplan asks of a node's agent, typed once: `fleetplan-agent
// SUBCOMMAND --option=value... [-- operands]`. Each subcommand is a struct
// whose options are declared once (option_list.h); apply, the plan, the
// transports and the CLI write a command with AgentArgs/AgentCommandLine,
// the agent reads it with ParseAgentCommand, and its usage text is made
// from the same declarations (OptionsUsage).
//
// Every command written carries `--protocol=N` (kAgentProtocol). An agent
// of another protocol refuses the command, saying so, instead of reading
// it differently; agents from before the subcommands (protocol 1, flags
// such as `--logs`) refuse it as an unknown flag. The agent on a node is
// the one the node's last sync shipped, so until an apply syncs it, a
// newer fleetplan's `logs`, `stop`, `stacks` and `top` on a node are refused
// rather than misread (an agent of protocol 1 would have taken `logs` for
// a program to run), and its apply session falls back to commands.

#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/protocol/launcher_contract.h"
#include "tools/protocol/option_list.h"
#include "tools/protocol/preflight_request.h"
#include "tools/protocol/session_wire.h"
#include "tools/protocol/supervision.h"

namespace fleetplan {

inline constexpr int kAgentProtocol = 2;

// Runs this node's ranks of a job (node_agent.h): the chief's agent
// (`supervision.nodes`) coordinates, the others connect to it
// (`supervision.coordinator`). The agent keeps it as parsed
// (NodeAgentOptions::request) and hands each part what it needs.
struct AgentLaunch {
  static constexpr char kName[] = "launch";
  static constexpr char kSummary[] =
      "Run this node's ranks of a job, supervised with the other nodes' agents.";
  std::string node;
  int first_rank = 0;
  int nproc = 1;
  int restarts = 0;
  std::string log_dir;
  std::string key_file;
  // Made the job's user's alone (0700) before anything starts: the node's
  // state folder (one an earlier version made 0755 is tightened).
  std::string private_dir;
  bool detach = false;
  // Coordinator or worker, heartbeats, an elastic job's policy (a worker's
  // `rejoins` is its --elastic).
  Supervision supervision;
  absl::Duration hang_timeout = absl::ZeroDuration();
  LauncherConfig launcher;  // whose contract the ranks see
  std::string progress;  // the spec's [job] progress: RE2 whose first group is a rank's step
  std::string run_id;    // the same on every node; empty: made by the coordinator
  absl::Duration grace_period = absl::Seconds(10);
  bool watch_stdin = true;
  std::vector<std::string> program;
  void Bind(OptionList& options);
  // The one check of a launch's values. InvalidArgument for `nodes` with
  // `coordinator`, a supervisor port or an elastic policy without `nodes`,
  // `elastic` without `coordinator`, a spare that is not among `nodes` or
  // is this node, no node, log folder or program, `nodes` of several
  // that leave out this node or lack a supervisor port, or values out of
  // range.
  absl::Status Check() const;
};

// This node's agent runs the job alone: no coordinator to reach, no
// other node listed (the one case that needs no job key).
bool RunsAlone(const AgentLaunch& launch);

// Prints this node's rank logs (job_files.h).
struct AgentLogs {
  static constexpr char kName[] = "logs";
  static constexpr char kSummary[] = "Print this node's rank logs.";
  std::string log_dir;
  std::string node;
  std::string run_id;  // empty: the latest run
  int rank = -1;       // -1: every rank
  int tail = -1;       // -1: every line
  bool follow = false;
  void Bind(OptionList& options);
  absl::Status Check() const;  // log_dir and node are required
};

// Stops the job's agent and ranks on this node.
struct AgentStop {
  static constexpr char kName[] = "stop";
  static constexpr char kSummary[] = "Stop the job's agent and ranks on this node.";
  std::string log_dir;
  absl::Duration grace_period = absl::Seconds(10);
  void Bind(OptionList& options);
  absl::Status Check() const;  // log_dir is required
};

// Prints where each running rank of this node stands, as one `stacks`
// peer message.
struct AgentStacks {
  static constexpr char kName[] = "stacks";
  static constexpr char kSummary[] =
      "Print where each running rank of this node stands (gdb py-bt and eu-stack attach for a "
      "moment; the job runs on) as one `stacks` message of JSON.";
  std::string log_dir;
  std::string node;
  void Bind(OptionList& options);
  absl::Status Check() const;  // log_dir is required
};

// Prints this node's CPU, memory and GPUs and its ranks' figures as one
// TopReport line (top_report.h).
struct AgentTop {
  static constexpr char kName[] = "top";
  static constexpr char kSummary[] =
      "Print this node's CPU, memory and GPUs and its ranks' CPU, memory, output age and steps "
      "as one line of JSON (tools/protocol/top_report.h).";
  std::string log_dir;
  std::string node;
  void Bind(OptionList& options);
  absl::Status Check() const;  // log_dir is required
};

// Runs this node's preflight checks (preflight.h in the agent) in the
// ranks' environment, which the plan's shell made first.
struct AgentPreflight {
  static constexpr char kName[] = "preflight";
  static constexpr char kSummary[] =
      "Run this node's preflight checks, print a check line each, and exit 1 when one failed.";
  PreflightRequest request;
  std::string activation = "none";  // how the python activation before it went: none, ok, failed
  std::string activation_output;    // what a failed activation printed
  bool watch_stdin = true;
  void Bind(OptionList& options);
  absl::Status Check() const;
};

// The network probes of the preflight checks, on their own.
struct AgentProbeListen {
  static constexpr char kName[] = "probe-listen";
  static constexpr char kSummary[] =
      "Listen on a port, print the port check, accept the connections expected, and exit.";
  int port = 0;
  int expect = 1;
  absl::Duration timeout = absl::Seconds(30);
  bool watch_stdin = true;
  void Bind(OptionList& options);
  absl::Status Check() const;  // a port is required
};

struct AgentProbeConnect {
  static constexpr char kName[] = "probe-connect";
  static constexpr char kSummary[] =
      "Connect to HOST:PORT, retrying until the timeout, and exit.";
  std::string target;
  absl::Duration timeout = absl::Seconds(30);
  void Bind(OptionList& options);
  absl::Status Check() const;  // a target is required
};

struct AgentProbeIfname {
  static constexpr char kName[] = "probe-ifname";
  static constexpr char kSummary[] = "Print the network interface that holds an address.";
  std::string address;
  void Bind(OptionList& options);
  absl::Status Check() const;  // an address is required
};

// Checks a synced tree against its manifest (exit 1 naming what differs).
struct AgentVerifyTree {
  static constexpr char kName[] = "verify-tree";
  static constexpr char kSummary[] =
      "Check that a folder holds every file of a sync manifest as listed.";
  std::string root;
  std::string manifest;
  void Bind(OptionList& options);
  absl::Status Check() const;  // both are required
};

// Serves apply's requests framed on stdin and stdout (session_wire.h).
struct AgentSession {
  static constexpr char kName[] = "session";
  static constexpr char kSummary[] =
      "Serve apply's requests (files, checks, commands) framed on stdin, answering on stdout, "
      "until stdin ends.";
  // How long it waits for a request while no command runs before it
  // leaves: apply's sessions keep the default (kSessionIdleTimeout), the
  // connection holder's last as long as it holds the node.
  absl::Duration idle_timeout = kSessionIdleTimeout;
  void Bind(OptionList& options);
  // InvalidArgument for an idle timeout that is not between 1 s and a day.
  absl::Status Check() const;
};

// The chief's side of the sync relay (relay.h in the agent).
struct AgentRelayServe {
  static constexpr char kName[] = "relay-serve";
  static constexpr char kSummary[] =
      "Serve this node's synced tree to the other nodes' agents until the receivers expected "
      "were served or stdin ends.";
  std::string root;
  std::string manifest;
  std::string key_file;
  int port = 0;
  int expect = 1;
  bool watch_stdin = true;
  void Bind(OptionList& options);
  absl::Status Check() const;  // root, manifest, key file and port are required
};

// A receiving node's side of the sync relay.
struct AgentRelayFetch {
  static constexpr char kName[] = "relay-fetch";
  static constexpr char kSummary[] =
      "Fetch what this node lacks from its parent in the relay chain (the fallback when that "
      "fails), passing it on to its own children; record the manifest and check the tree; exit "
      "75 when no source can be reached.";
  std::string key_file;
  std::string from;  // the parent's HOST:PORT
  std::string from_node;
  std::string fallback;  // HOST:PORT (the chief)
  std::string fallback_node;
  int port = 0;    // serve children on this port meanwhile; 0: none
  int expect = 0;  // the children served
  std::string root;
  std::string manifest;
  std::string expect_digest;  // the manifest's digest apply synced; another one fails
  bool all = false;           // fetch every file, whatever this node recorded
  void Bind(OptionList& options);
  // from, root, manifest and key file are required; a fallback node without
  // a fallback, or children without a port, conflict.
  absl::Status Check() const;
};

// On the first host of a Slurm allocation: hands a launch script (on
// stdin) to the allocation's batch script (plugins/slurm/agent_step.h).
struct AgentSlurmRequest {
  static constexpr char kName[] = "slurm-request";
  static constexpr char kSummary[] =
      "Put the launch script on stdin in a Slurm allocation's launch folder and name it to the "
      "batch script waiting there, once it waits.";
  std::string dir;     // the allocation's launch folder
  std::string run_id;  // the launch script is launch-RUN.sh
  absl::Duration timeout = absl::Minutes(2);
  void Bind(OptionList& options);
  absl::Status Check() const;  // both are required; the run id a plain name
};

// On each host of a Slurm launch: waits for its agent's launch report.
struct AgentSlurmAwait {
  static constexpr char kName[] = "slurm-await";
  static constexpr char kSummary[] =
      "Wait for this host's launch agent to report, print what it said and exit with its "
      "status; or say that its job step ended first.";
  std::string report;     // what the agent writes (FLEETPLAN_LAUNCH_REPORT)
  std::string step_exit;  // srun's status once the agents' step ended (the first host's)
  std::string step_log;   // what that srun said
  std::string host;       // for messages
  absl::Duration timeout = absl::Seconds(120);
  void Bind(OptionList& options);
  absl::Status Check() const;  // report and host are required
};

// Every subcommand, in the order the usage lists them.
using AgentCommand =
    std::variant<AgentLaunch, AgentLogs, AgentStop, AgentStacks, AgentTop, AgentPreflight,
                 AgentProbeListen, AgentProbeConnect, AgentProbeIfname, AgentVerifyTree,
                 AgentSession, AgentRelayServe, AgentRelayFetch, AgentSlurmRequest,
                 AgentSlurmAwait>;

// `--protocol=<kAgentProtocol>`.
std::string AgentProtocolArg();

// The subcommand's name: "logs".
absl::string_view AgentCommandName(const AgentCommand& command);

// The agent's arguments for `command` (after argv[0]): its name,
// --protocol, then its options, those at their default left out.
template <typename T>
std::vector<std::string> AgentArgs(const T& command) {
  std::vector<std::string> args = {T::kName, AgentProtocolArg()};
  std::vector<std::string> options = WriteOptions(command);
  args.insert(args.end(), options.begin(), options.end());
  return args;
}
std::vector<std::string> AgentArgs(const AgentCommand& command);

// One sh command line: `agent_path` and AgentArgs(command), each quoted.
// `on_node` replaces options' values with sh text expanded on the node:
// {"activation-output", "\"$out\""} writes --activation-output="$out".
struct NodeSideValue {
  std::string option;  // its name: "activation-output"
  std::string shell;   // sh text, written as it is
};
std::string AgentCommandLine(absl::string_view agent_path, const std::vector<std::string>& args,
                             const std::vector<NodeSideValue>& on_node = {});
template <typename T>
std::string AgentCommandLine(absl::string_view agent_path, const T& command,
                             const std::vector<NodeSideValue>& on_node = {}) {
  return AgentCommandLine(agent_path, AgentArgs(command), on_node);
}

// The command `args` (after argv[0]) ask for. InvalidArgument naming what
// is wrong: no or an unknown subcommand (an agent flag of protocol 1
// says so), another protocol, an option the subcommand does not take, one
// given twice, or options that conflict.
absl::StatusOr<AgentCommand> ParseAgentCommand(const std::vector<std::string>& args);

// The agent command an sh command line runs: the first of its commands
// (separated by `&&`, `;` or `||`) that runs fleetplan-agent, after an
// optional `exec`, as AgentCommandLine wrote it. For tests and fakes that
// stand in for a node, and for a transport that must know a launch's run.
// InvalidArgument when it runs no agent command.
absl::StatusOr<AgentCommand> ParseAgentCommandLine(absl::string_view line);

// The agent's usage: every subcommand, its summary and its options.
std::string AgentUsage();

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_AGENT_COMMAND_H_
