#include "tools/plan/preflight_script.h"

#include "absl/strings/str_cat.h"
#include "tools/plan/node_scripts.h"
#include "tools/protocol/node_layout.h"
#include "tools/protocol/agent_command.h"
#include "tools/util/shell_quote.h"

namespace fleetplan {
namespace {

// fp_check CHECK STATUS MESSAGE: one check line, the message on one line.
// tr runs only for a message with a character that is not printable (a
// CR or LF among them), as forking it for every check line is most of a
// short script's cost.
constexpr char kCheckFunction[] = R"sh(fp_check() {
  case $3 in
    *[![:print:]]*) set -- "$1" "$2" "$(printf '%s' "$3" | tr '\r\n' '  ')" ;;
  esac
  printf 'fleetplan-check %s %s %s\n' "$1" "$2" "$3"
}
)sh";

// Before a sync: the workdir and state folder can be made, and BYTES fit.
// df's figures are read with `read`: a node may lack awk.
// The user is sshd's LOGNAME where set, and the state folder is made only
// when missing: a re-sync forks no id and no mkdir.
constexpr char kWorkdirBeforeSync[] = R"sh(fp_user=${LOGNAME:-$(id -un 2>/dev/null || id -u)}
if ! { [ -d "$fp_state" ] || fp_e=$(mkdir -p "$fp_state" 2>&1); } || [ ! -w "$fp_w" ]; then
  fp_check workdir fail "$fp_w: cannot be created or written by $fp_user (${fp_e:-not writable}); expected a folder $fp_user can write at this absolute path on every node; fix: choose a workdir on a writable filesystem, or create it and give $fp_user write access to it"
  exit 1
fi
fp_kb=$(df -Pk "$fp_w" 2>/dev/null | { read -r fp_h && read -r fp_fs fp_total fp_used fp_avail fp_rest && printf '%s' "$fp_avail"; })
case $fp_kb in
  ''|*[!0-9]*)
    fp_check workdir skip "$fp_w: writable by $fp_user; free space not checked: df -Pk printed no figure for it"
    exit 0 ;;
esac
if [ "$fp_bytes" -gt $((fp_kb * 1024)) ]; then
  fp_check workdir fail "$fp_w: $((fp_kb / 1024)) MiB free, the sync needs $(((fp_bytes + 1048575) / 1048576)) MiB; expected at least the sync's size free; fix: free space on the filesystem of $fp_w, or choose another workdir"
  exit 1
fi
fp_check workdir ok "$fp_w: writable by $fp_user, $((fp_kb / 1024)) MiB free"
)sh";

// How long a node retries connecting to the chief's listeners, which start
// at the same time; without the agent on the chief (plan --check) nothing
// listens, so do not wait as long.
absl::Duration ConnectTimeout(PreflightMode mode) {
  return mode == PreflightMode::kApply ? absl::Seconds(30) : absl::Seconds(10);
}

// The python activation as env.sh does it, first in a subshell, whose
// output says why when it fails (a failing `.` would end this shell).
std::string ActivationLines(const PythonEnv& python) {
  std::string activate = PythonActivation(python);
  if (activate.empty()) return "";
  return absl::StrCat("fp_activation=failed\n", "if fp_out=$( {\n", activate,
                      "} </dev/null 2>&1 ); then\n", "{\n", activate,
                      "} </dev/null >/dev/null 2>&1 && fp_activation=ok\n", "fi\n");
}

// What the script says when the agent cannot run its checks.
std::string AgentProblem(PreflightMode mode, const std::string& message) {
  return mode == PreflightMode::kApply
             ? absl::StrCat("fp_check agent fail ", message, "\nexit 1\n")
             : absl::StrCat("fp_check agent skip ", message, "\nexit 0\n");
}

}  // namespace

std::string PreflightLibrary() {
  return absl::StrCat("# fleetplan preflight: the launch agent prints a `fleetplan-check` line "
                      "per check.\n",
                      kCheckFunction);
}

PreflightRequest PreflightRequestFor(const NodeSpec& node, const PreflightInputs& inputs) {
  PreflightRequest request;
  request.check_only = inputs.mode == PreflightMode::kCheckOnly;
  request.workdir = node.workdir;
  request.state_dir = NodeStateDir(node);
  request.sync_bytes = inputs.sync_bytes;
  request.manifest = SyncManifestPath(node);
  if (&node == inputs.chief) request.listen_for = inputs.nodes;
  request.chief_address = ReachAddress(*inputs.chief);
  request.master_port = inputs.master_port;
  request.supervisor_port = inputs.supervisor_port;
  request.connect_timeout = ConnectTimeout(inputs.mode);
  if (inputs.nccl_auto) {
    request.nccl_address = ReachAddress(node);
    request.nccl_env_file = PreflightEnvPath(node);
  }
  switch (node.python.kind) {
    case PythonEnv::Kind::kVenv:
      request.venv = node.python.venv;
      break;
    case PythonEnv::Kind::kConda:
      request.conda = node.python.conda;
      request.conda_sh = node.python.conda_sh;
      break;
    case PythonEnv::Kind::kNone:
      break;
  }
  request.gpus = node.gpus;
  request.program = ProgramPath(*inputs.job, node);
  return request;
}

namespace {

// The agent's preflight command line; the python activation's outcome
// and output are known on the node only, in the script's variables.
std::string PreflightAgentCommand(const NodeSpec& node, const PreflightInputs& inputs) {
  AgentPreflight preflight;
  preflight.request = PreflightRequestFor(node, inputs);
  std::vector<NodeSideValue> on_node;
  if (node.python.kind != PythonEnv::Kind::kNone) {
    on_node = {{"activation", "\"$fp_activation\""}, {"activation-output", "\"$fp_out\""}};
  }
  return AgentCommandLine(AgentPath(node), preflight, on_node);
}

}  // namespace

std::string PreflightScript(const NodeSpec& node, const std::vector<NodeVar>& node_env,
                            const PreflightInputs& inputs) {
  std::string agent = AgentPath(node);
  std::string script = absl::StrCat(
      "# The checks of node ", ShellQuote(node.name),
      ": the ranks' environment as env.sh makes it, then the launch agent's checks.\n",
      "fp_agent=", ShellQuote(agent), "\n", "if [ ! -x \"$fp_agent\" ]; then\n",
      AgentProblem(inputs.mode,
                   ShellQuote(absl::StrCat(
                       "fleetplan-agent is not on this node yet (", agent,
                       "; apply copies it there before its preflight); no check ran"))),
      "fi\n", ActivationLines(node.python), EnvExports(node_env),
      // The chief's listeners end when this stdin does: apply closes it
      // once the other nodes' checks have ended.
      PreflightAgentCommand(node, inputs));
  absl::StrAppend(
      &script, "\nfp_status=$?\n", "if [ \"$fp_status\" -gt 1 ]; then\n",
      AgentProblem(inputs.mode,
                   "\"fleetplan-agent preflight ended with status $fp_status before its "
                   "checks were done (an older agent, or it crashed); apply copies the current "
                   "one to the node\""),
      "fi\n", "exit \"$fp_status\"\n");
  return script;
}

std::string WorkdirCheckScript(const NodeSpec& node, uint64_t bytes) {
  return absl::StrCat(PreflightLibrary(), "fp_w=", ShellQuote(node.workdir), "\nfp_state=",
                      ShellQuote(NodeStateDir(node)), "\nfp_bytes=", bytes, "\n",
                      kWorkdirBeforeSync);
}

}  // namespace fleetplan
