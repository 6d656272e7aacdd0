#ifndef FLEETPLAN_TOOLS_PLAN_NODE_SCRIPTS_H_
#define FLEETPLAN_TOOLS_PLAN_NODE_SCRIPTS_H_

// The shell text a plan runs or writes on a node: the env.sh file, the
// agent's launch command. Every value from the spec is quoted with
// tools/util/shell_quote.h. The shell around the preflight checks (which
// the agent runs) is in preflight_script.h;
// the paths on the node are tools/protocol/node_layout.h's.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/plan/rank_env.h"
#include "tools/protocol/agent_command.h"
#include "tools/protocol/node_layout.h"
#include "tools/protocol/supervision.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

// The target name of a label: `//trainer:train` → "train", `//pkg/sub` → "sub".
std::string LabelTargetName(absl::string_view label);

// The program the agent starts on `node`: <workdir>/.fleetplan/bin/<target>
// for a label, the path itself when absolute, a name without '/' as it is
// (found on the ranks' PATH when they start, and by preflight), else
// <workdir>/<path> (`./x`, `dir/x`).
std::string ProgramPath(const JobSpec& job, const NodeSpec& node);

// The sh lines that activate `python` (none for PythonEnv::Kind::kNone).
std::string PythonActivation(const PythonEnv& python);

// The `export NAME=value` lines of `node_env` (group values expanded on the
// node).
std::string EnvExports(const std::vector<NodeVar>& node_env);

// A POSIX sh script, sourced before ranks start, that activates the node's
// python and exports `node_env`; with `nccl_auto` it then sources the
// node's preflight.env, where preflight wrote the NCCL_SOCKET_IFNAME it
// found. With `secrets`, it exports their names (kSecretNamesVar) and
// sources the node's secrets file (SecretsPath), which apply writes; it
// never holds a value.
std::string EnvScript(const NodeSpec& node, const std::vector<NodeVar>& node_env,
                      bool nccl_auto, const std::vector<SecretSpec>& secrets);

// The secrets file (SecretsPath) that apply writes from the values it
// read: an `export NAME='value'` line each, quoted for sh whatever it
// holds. Never part of a plan: apply calls it with `values` in hand.
std::string SecretsFileText(const EnvList& values);

// env.sh's text for every node of `spec`, in node order: what the
// environment phase writes (EnvScript of NodeEnvironment).
std::vector<std::string> EnvScripts(const ClusterSpec& spec);

// One sh command line from `argv`: a single argument as written (a shell
// command line: pipes, `&&`, `$VAR` work), several each quoted as one word.
std::string ShellCommandLine(const std::vector<std::string>& argv);

// What `exec` runs on `node`: the node's environment (its env.sh, or
// `env_script`, the same made from the spec, where no apply has written it
// yet), then `command_line` in the workdir (in the home folder, saying so on
// stderr, where no apply has created it yet).
std::string ExecCommand(const NodeSpec& node, absl::string_view env_script,
                        absl::string_view command_line);

// What the node's agent is asked to launch: it starts detached (it
// outlives the transport's session), starts the node's ranks and returns
// once they run. It is told where the node's job key is (JobKeyPath),
// never the key itself: command lines are everyone's to read. The run id
// is apply's to set, each run (LaunchCommandLine writes it).
AgentLaunch LaunchRequest(const JobSpec& job, const NodeSpec& node, int first_rank,
                          const Supervision& supervision);

// The command that runs `launch` on `node`: in its workdir, its env.sh
// sourced, the agent exec'd.
std::string LaunchCommandLine(const NodeSpec& node, const AgentLaunch& launch);

// What `logs` asks of a node's agent (fleetplan-agent logs).
struct LogsRequest {
  std::string run_id;  // empty: the latest run
  int rank = -1;       // -1: every rank of the node
  int tail = -1;       // -1: every line
  bool follow = false;
};

// Prints the node's rank logs, prefixed `[node/rank]`; with `follow`, until
// the node's part of the run ends, exiting with the job's status.
std::string LogsCommand(const NodeSpec& node, const LogsRequest& request);

// Stops the job's agent and ranks on the node; exits 0 once none is left.
std::string StopCommand(const NodeSpec& node);

// Prints where the node's running ranks stand, as one `stacks` peer
// message (fleetplan-agent stacks).
std::string StacksCommand(const NodeSpec& node);

// Prints the node's CPU, memory and GPUs and its ranks' figures, as one
// TopReport line (fleetplan-agent top, tools/protocol/top_report.h).
std::string TopCommand(const NodeSpec& node);

// Creates ~/.ssh/id_ed25519 when missing and prints its public key.
std::string EnsureKeyCommand();

// `bazel build <label>`.
std::string BazelBuildCommand(absl::string_view label);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PLAN_NODE_SCRIPTS_H_
