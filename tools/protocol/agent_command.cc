#include "tools/protocol/agent_command.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/util/did_you_mean.h"
#include "tools/util/shell_quote.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

absl::Status Required(bool given, absl::string_view what) {
  if (given) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--", what, " is required"));
}

absl::Status Conflict(absl::string_view one, absl::string_view other, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("--", one, " and --", other, " ", why));
}

// The subcommands' names and parsers, in AgentCommand's order.
struct Row {
  absl::string_view name;
  absl::StatusOr<AgentCommand> (*parse)(const std::vector<std::string>& args);
};

template <typename T>
absl::StatusOr<AgentCommand> ParseAs(const std::vector<std::string>& args) {
  absl::StatusOr<T> command = ParseOptions<T>(T::kName, args);
  if (!command.ok()) return command.status();
  return AgentCommand(*std::move(command));
}

template <typename T>
Row RowOf() {
  return {T::kName, &ParseAs<T>};
}

template <typename... T>
std::vector<Row> RowsOf(const std::variant<T...>*) {
  return {RowOf<T>()...};
}

const std::vector<Row>& Rows() {
  static const std::vector<Row>* rows = new std::vector<Row>(RowsOf(
      static_cast<const AgentCommand*>(nullptr)));
  return *rows;
}

// Takes `--protocol=N` out of `args`; InvalidArgument for another N.
absl::Status TakeProtocol(std::vector<std::string>* args) {
  for (auto it = args->begin(); it != args->end() && *it != "--"; ++it) {
    if (!absl::StartsWith(*it, "--protocol=")) continue;
    if (*it != AgentProtocolArg()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "this agent speaks protocol ", kAgentProtocol, ", the command ", *it,
          ": apply again to ship the agent of this fleetplan"));
    }
    args->erase(it);
    return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace

void AgentLaunch::Bind(OptionList& options) {
  options.Text("node", "NAME", &node, "This node's name, for output prefixes and job.json.");
  options.Number("first-rank", "N", &first_rank, "RANK of this node's first rank (LOCAL_RANK 0).");
  options.Number("nproc", "K", &nproc, "Ranks to start on this node.");
  options.Number("restarts", "R", &restarts,
                 "Whole-job restarts after a failure (like torchrun --max-restarts); the "
                 "coordinator's budget.");
  options.Text("log-dir", "DIR", &log_dir,
               "Directory for job.json, per-run rank logs, `latest` and agent.log.");
  options.Text("key-file", "PATH", &key_file,
               "The job's key (64 hex digits in a file of this user's alone): every connection "
               "between agents proves it. Required unless this node is the job's only one.");
  options.Text("private-dir", "DIR", &private_dir,
               "A folder made this user's alone (mode 0700) before anything starts: the "
               "node's state folder.");
  options.Switch("detach", &detach,
                 "Run on in a session of its own, output in the logs, and return once this "
                 "node's ranks have started.");
  options.List("nodes", "A,B,...", &supervision.nodes,
               "Coordinator: every node of the job, this one included.");
  options.Number("supervisor-port", "P", &supervision.supervisor_port,
                 "Coordinator: the port the other nodes' agents connect to.");
  options.Text("coordinator", "HOST:PORT", &supervision.coordinator,
               "Worker: the coordinator's address.");
  options.Duration("heartbeat-timeout", &supervision.heartbeat_timeout,
                   "Silence from the coordinator (or a worker) after which the job stops.");
  options.Duration("hang-timeout", &hang_timeout,
                   "No rank of the job progressing this long (output, CPU time, GPU "
                   "utilization) makes it hung: every rank's stacks are collected, then the "
                   "job restarts or fails with 124. 0: off.");
  options.Custom(
      "launcher", "NAME",
      "Whose contract the ranks see: torchrun, distributed-launch, mpirun or deepspeed.",
      [this] { return std::string(LauncherName(launcher.launcher)); },
      [this](absl::string_view name) {
        std::optional<Launcher> parsed = ParseLauncher(name);
        if (!parsed.has_value()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "--launcher=", name, ": expected one of ", absl::StrJoin(LauncherNames(), ", ")));
        }
        launcher.launcher = *parsed;
        return absl::OkStatus();
      });
  options.Text("local-rank-arg", "NAME", &launcher.local_rank_arg,
               "distributed-launch, deepspeed: the local-rank argument's name.");
  options.Text("progress", "REGEX", &progress,
               "A regular expression (RE2) whose first group is a rank's step in a line of its "
               "output, beside the trainer's metric lines; what `top` shows.");
  options.Text("run-id", "ID", &run_id,
               "The run's id, the same on every node (default: made by the "
               "coordinator).");
  options.Duration("grace-period", &grace_period,
                   "How long stopped ranks get between SIGTERM and SIGKILL.");
  options.Switch("watch-stdin", &watch_stdin, "Stop all ranks when stdin reaches end-of-file.");
  options.Number("min-nodes", "N", &supervision.elastic.min_nodes,
                 "Coordinator: the fewest nodes the job runs on after losing some (0: every "
                 "node that is no spare).");
  options.Number("max-node-losses", "N", &supervision.elastic.max_node_losses,
                 "Coordinator: node losses the job survives (-1: any, while min-nodes remain).");
  options.Text("rejoin", "WHEN", &supervision.elastic.rejoin,
               "Coordinator: when a lost node that comes back joins a job below its full size: "
               "restart (at once) or next-failure.");
  options.List("spares", "A,B,...", &supervision.elastic.spares,
               "Coordinator: the nodes that run no rank until one of the others is lost.");
  options.Switch("elastic", &supervision.rejoins,
                 "Worker: after losing the coordinator, stop the ranks and try to rejoin (up to "
                 "10 minutes) instead of ending.");
  options.Operands("PROGRAM ARGS...", &program);
}

namespace {

// What an elastic job's options must hold together.
absl::Status CheckElastic(const AgentLaunch& launch) {
  const Supervision& supervision = launch.supervision;
  const ElasticPolicy& policy = supervision.elastic;
  bool given = policy.min_nodes != 0 || policy.max_node_losses != -1 ||
               policy.rejoin != "restart" || !policy.spares.empty();
  if (given && supervision.nodes.empty()) {
    return absl::InvalidArgumentError(
        "--min-nodes, --max-node-losses, --rejoin and --spares are the coordinator's: they "
        "need --nodes");
  }
  if (supervision.rejoins && supervision.coordinator.empty()) {
    return Conflict("elastic", "coordinator", "go together: only a worker rejoins");
  }
  if (policy.min_nodes < 0 || policy.max_node_losses < -1) {
    return absl::InvalidArgumentError(
        "--min-nodes must be >= 0 and --max-node-losses >= -1 (-1: any)");
  }
  if (policy.rejoin != "restart" && policy.rejoin != "next-failure") {
    return absl::InvalidArgumentError(
        absl::StrCat("--rejoin=", policy.rejoin, ": expected restart or next-failure"));
  }
  for (const std::string& spare : policy.spares) {
    if (std::find(supervision.nodes.begin(), supervision.nodes.end(), spare) ==
            supervision.nodes.end() ||
        spare == launch.node) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--spares: '", spare, "' is not one of --nodes other than this node"));
    }
  }
  int regular = static_cast<int>(supervision.nodes.size() - policy.spares.size());
  if (policy.min_nodes > regular) {
    return absl::InvalidArgumentError(absl::StrCat("--min-nodes=", policy.min_nodes,
                                                   " is more than the ", regular,
                                                   " nodes that are no spares"));
  }
  return absl::OkStatus();
}

// The coordinator lists this node among several, and listens.
absl::Status CheckCoordinator(const AgentLaunch& launch) {
  const Supervision& supervision = launch.supervision;
  if (!supervision.coordinator.empty() || RunsAlone(launch)) return absl::OkStatus();
  if (std::find(supervision.nodes.begin(), supervision.nodes.end(), launch.node) ==
      supervision.nodes.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--nodes must list this node ('", launch.node, "')"));
  }
  if (supervision.supervisor_port < 1 || supervision.supervisor_port > 65535) {
    return absl::InvalidArgumentError("a job of several nodes needs --supervisor-port");
  }
  return absl::OkStatus();
}

// The values a launch cannot run without, each in its range.
absl::Status CheckValues(const AgentLaunch& launch) {
  FP_RETURN_IF_ERROR(Required(!launch.node.empty(), "node"));
  if (launch.nproc < 1) return absl::InvalidArgumentError("--nproc must be at least 1");
  if (launch.first_rank < 0) return absl::InvalidArgumentError("--first-rank must be >= 0");
  if (launch.restarts < 0) return absl::InvalidArgumentError("--restarts must be >= 0");
  FP_RETURN_IF_ERROR(Required(!launch.log_dir.empty(), "log-dir"));
  if (launch.program.empty()) return absl::InvalidArgumentError("no program: give it after `--`");
  if (launch.supervision.heartbeat_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--heartbeat-timeout must be positive");
  }
  if (launch.hang_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--hang-timeout must not be negative (0: off)");
  }
  return absl::OkStatus();
}

}  // namespace

bool RunsAlone(const AgentLaunch& launch) {
  const Supervision& supervision = launch.supervision;
  return supervision.coordinator.empty() &&
         (supervision.nodes.empty() ||
          (supervision.nodes.size() == 1 && supervision.nodes[0] == launch.node));
}

absl::Status AgentLaunch::Check() const {
  if (!supervision.nodes.empty() && !supervision.coordinator.empty()) {
    return Conflict("nodes", "coordinator",
                    "exclude each other: the coordinator lists the nodes, a worker names it");
  }
  if (supervision.supervisor_port != 0 && supervision.nodes.empty()) {
    return Conflict("supervisor-port", "nodes", "go together: only the coordinator listens");
  }
  FP_RETURN_IF_ERROR(CheckElastic(*this));
  FP_RETURN_IF_ERROR(CheckValues(*this));
  return CheckCoordinator(*this);
}

void AgentSession::Bind(OptionList& options) {
  options.Duration("idle-timeout", &idle_timeout,
                   "How long to wait for a request while no command runs before leaving.");
}

absl::Status AgentSession::Check() const {
  if (idle_timeout < absl::Seconds(1) || idle_timeout > absl::Hours(24)) {
    return absl::InvalidArgumentError("--idle-timeout must be between 1s and 24h");
  }
  return absl::OkStatus();
}

void AgentLogs::Bind(OptionList& options) {
  options.Text("log-dir", "DIR", &log_dir, "The job's log directory on this node.");
  options.Text("node", "NAME", &node, "This node's name, for the [node/rank] prefix.");
  options.Text("run", "ID", &run_id, "The run to print (default: the latest).");
  options.Number("rank", "N", &rank, "Only this rank.");
  options.Number("tail", "N", &tail, "Only the last N lines of each rank.");
  options.Switch("follow", &follow, "Keep printing until this node's part of the run ends.");
}

absl::Status AgentLogs::Check() const {
  if (absl::Status given = Required(!log_dir.empty(), "log-dir"); !given.ok()) return given;
  return Required(!node.empty(), "node");
}

void AgentStop::Bind(OptionList& options) {
  options.Text("log-dir", "DIR", &log_dir, "The job's log directory on this node.");
  options.Duration("grace-period", &grace_period,
                   "How long stopped ranks get between SIGTERM and SIGKILL.");
}

absl::Status AgentStop::Check() const { return Required(!log_dir.empty(), "log-dir"); }

void AgentStacks::Bind(OptionList& options) {
  options.Text("log-dir", "DIR", &log_dir, "The job's log directory on this node.");
  options.Text("node", "NAME", &node, "This node's name.");
}

absl::Status AgentStacks::Check() const { return Required(!log_dir.empty(), "log-dir"); }

void AgentTop::Bind(OptionList& options) {
  options.Text("log-dir", "DIR", &log_dir, "The job's log directory on this node.");
  options.Text("node", "NAME", &node, "This node's name.");
}

absl::Status AgentTop::Check() const { return Required(!log_dir.empty(), "log-dir"); }

void AgentPreflight::Bind(OptionList& options) {
  options.Custom(
      "request", "JSON", "What to check (tools/protocol/preflight_request.h).",
      [this] { return PreflightRequestToJson(request); },
      [this](absl::string_view json) {
        absl::StatusOr<PreflightRequest> parsed = PreflightRequestFromJson(json);
        if (!parsed.ok()) return parsed.status();
        request = *std::move(parsed);
        return absl::OkStatus();
      });
  options.Text("activation", "none|ok|failed", &activation,
               "How the python activation before it went.");
  options.Text("activation-output", "TEXT", &activation_output,
               "What a failed activation printed.");
  options.Switch("watch-stdin", &watch_stdin,
                 "End the chief's listeners when stdin reaches end-of-file.");
}

absl::Status AgentPreflight::Check() const {
  if (activation != "none" && activation != "ok" && activation != "failed") {
    return absl::InvalidArgumentError(
        absl::StrCat("--activation=", activation, ": none, ok or failed expected"));
  }
  return absl::OkStatus();
}

void AgentProbeListen::Bind(OptionList& options) {
  options.Number("port", "PORT", &port, "The port to listen on.");
  options.Number("expect", "N", &expect, "The connections to wait for.");
  options.Duration("timeout", &timeout, "How long to listen at most.");
  options.Switch("watch-stdin", &watch_stdin, "End when stdin reaches end-of-file.");
}

absl::Status AgentProbeListen::Check() const { return Required(port != 0, "port"); }

void AgentProbeConnect::Bind(OptionList& options) {
  options.Text("target", "HOST:PORT", &target, "Where to connect.");
  options.Duration("timeout", &timeout, "How long to retry.");
}

absl::Status AgentProbeConnect::Check() const { return Required(!target.empty(), "target"); }

void AgentProbeIfname::Bind(OptionList& options) {
  options.Text("address", "ADDRESS", &address, "An IPv4 or IPv6 address of this node.");
}

absl::Status AgentProbeIfname::Check() const { return Required(!address.empty(), "address"); }

void AgentVerifyTree::Bind(OptionList& options) {
  options.Text("root", "DIR", &root, "The synced folder.");
  options.Text("manifest", "PATH", &manifest, "The sync manifest it should match.");
}

absl::Status AgentVerifyTree::Check() const {
  if (absl::Status given = Required(!root.empty(), "root"); !given.ok()) return given;
  return Required(!manifest.empty(), "manifest");
}

void AgentRelayServe::Bind(OptionList& options) {
  options.Text("root", "DIR", &root, "The synced tree to serve.");
  options.Text("manifest", "PATH", &manifest, "What this node's last sync recorded.");
  options.Text("key-file", "PATH", &key_file, "The job's key: receivers must prove it.");
  options.Number("port", "P", &port, "The port to listen on.");
  options.Number("expect", "N", &expect, "The receivers to serve.");
  options.Switch("watch-stdin", &watch_stdin, "End when stdin reaches end-of-file.");
}

absl::Status AgentRelayServe::Check() const {
  for (const auto& [given, name] : {std::pair<bool, const char*>{!root.empty(), "root"},
                                    {!manifest.empty(), "manifest"},
                                    {!key_file.empty(), "key-file"},
                                    {port != 0, "port"}}) {
    if (absl::Status required = Required(given, name); !required.ok()) return required;
  }
  return absl::OkStatus();
}

void AgentRelayFetch::Bind(OptionList& options) {
  options.Text("key-file", "PATH", &key_file, "The job's key: sources and children prove it.");
  options.Text("from", "HOST:PORT", &from, "The parent's relay server.");
  options.Text("from-node", "NAME", &from_node, "The parent's node name, for messages.");
  options.Text("fallback", "HOST:PORT", &fallback,
               "Where to fetch the rest when the parent cannot be reached or breaks off.");
  options.Text("fallback-node", "NAME", &fallback_node, "The fallback's node name.");
  options.Number("port", "P", &port, "Serve this node's children on this port meanwhile.");
  options.Number("expect", "N", &expect, "This node's children.");
  options.Text("root", "DIR", &root, "Where this node's tree is.");
  options.Text("manifest", "PATH", &manifest, "Where this node records the manifest.");
  options.Text("expect-digest", "HEX", &expect_digest,
               "The digest of the manifest apply synced; another one fails.");
  options.Switch("all", &all, "Fetch every file, whatever this node recorded.");
}

absl::Status AgentRelayFetch::Check() const {
  for (const auto& [given, name] : {std::pair<bool, const char*>{!from.empty(), "from"},
                                    {!root.empty(), "root"},
                                    {!manifest.empty(), "manifest"},
                                    {!key_file.empty(), "key-file"}}) {
    if (absl::Status required = Required(given, name); !required.ok()) return required;
  }
  if (!fallback_node.empty() && fallback.empty()) {
    return Conflict("fallback-node", "fallback", "go together");
  }
  if (expect != 0 && port == 0) return Conflict("expect", "port", "go together");
  return absl::OkStatus();
}

void AgentSlurmRequest::Bind(OptionList& options) {
  options.Text("dir", "DIR", &dir, "The allocation's launch folder.");
  options.Text("run", "ID", &run_id, "The launch's run id.");
  options.Duration("timeout", &timeout, "How long to wait for the batch script.");
}

absl::Status AgentSlurmRequest::Check() const {
  if (absl::Status given = Required(!dir.empty(), "dir"); !given.ok()) return given;
  // It becomes a file name and a line the batch script reads.
  bool plain = !run_id.empty();
  for (char c : run_id) {
    plain = plain && (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                      c == '_' || c == '-');
  }
  if (!plain) {
    return absl::InvalidArgumentError(
        absl::StrCat("--run=", run_id, ": letters, digits, '.', '_' and '-' expected"));
  }
  return absl::OkStatus();
}

void AgentSlurmAwait::Bind(OptionList& options) {
  options.Text("report", "PATH", &report, "The file the agent reports to.");
  options.Text("step-exit", "PATH", &step_exit,
               "srun's status, once the agents' job step ended.");
  options.Text("step-log", "PATH", &step_log, "What that srun said.");
  options.Text("host", "NAME", &host, "This host's name, for messages.");
  options.Duration("timeout", &timeout, "How long to wait for the report.");
}

absl::Status AgentSlurmAwait::Check() const {
  if (absl::Status given = Required(!report.empty(), "report"); !given.ok()) return given;
  return Required(!host.empty(), "host");
}

std::string AgentProtocolArg() { return absl::StrCat("--protocol=", kAgentProtocol); }

absl::string_view AgentCommandName(const AgentCommand& command) {
  return Rows()[command.index()].name;
}

std::vector<std::string> AgentArgs(const AgentCommand& command) {
  return std::visit([](const auto& typed) { return AgentArgs(typed); }, command);
}

std::string AgentCommandLine(absl::string_view agent_path, const std::vector<std::string>& args,
                             const std::vector<NodeSideValue>& on_node) {
  std::vector<std::string> words = {ShellQuote(agent_path)};
  auto operands = std::find(args.begin(), args.end(), "--");
  for (auto arg = args.begin(); arg != operands; ++arg) {
    bool replaced = false;
    for (const NodeSideValue& value : on_node) {
      replaced = replaced || absl::StartsWith(*arg, absl::StrCat("--", value.option, "="));
    }
    if (!replaced) words.push_back(ShellQuote(*arg));
  }
  for (const NodeSideValue& value : on_node) {
    words.push_back(absl::StrCat("--", value.option, "=", value.shell));
  }
  for (auto arg = operands; arg != args.end(); ++arg) words.push_back(ShellQuote(*arg));
  return absl::StrJoin(words, " ");
}

absl::StatusOr<AgentCommand> ParseAgentCommand(const std::vector<std::string>& given) {
  std::vector<std::string> names;
  for (const Row& row : Rows()) names.emplace_back(row.name);
  if (given.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no subcommand; one of ", absl::StrJoin(names, ", ")));
  }
  const std::string& name = given[0];
  for (const Row& row : Rows()) {
    if (row.name != name) continue;
    std::vector<std::string> args(given.begin() + 1, given.end());
    if (absl::Status protocol = TakeProtocol(&args); !protocol.ok()) return protocol;
    return row.parse(args);
  }
  if (absl::StartsWith(name, "--")) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": the agent takes a subcommand first (", absl::StrJoin(names, ", "),
        "); flags such as --logs are an older fleetplan's (protocol 1)"));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown subcommand '", name, "'",
                                                 DidYouMean(name, names), "; subcommands: ",
                                                 absl::StrJoin(names, ", ")));
}

absl::StatusOr<AgentCommand> ParseAgentCommandLine(absl::string_view line) {
  absl::StatusOr<std::vector<std::string>> words = SplitShellWords(line);
  if (!words.ok()) return words.status();
  auto separates = [](const std::string& word) {
    return word == "&&" || word == ";" || word == "||";
  };
  // The first of its commands that runs the agent (a launch runs `cd` and
  // sources env.sh first).
  for (auto word = words->begin(); word != words->end();) {
    auto end = word;
    while (end != words->end() && !separates(*end)) ++end;
    if (word != end && *word == "exec") ++word;
    if (word != end && absl::EndsWith(*word, "fleetplan-agent")) {
      return ParseAgentCommand(std::vector<std::string>(word + 1, end));
    }
    word = end == words->end() ? end : end + 1;
  }
  return absl::InvalidArgumentError(absl::StrCat("runs no fleetplan-agent: ", line));
}

}  // namespace fleetplan
