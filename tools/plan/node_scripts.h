#ifndef FLEETPLAN_TOOLS_PLAN_NODE_SCRIPTS_H_
#define FLEETPLAN_TOOLS_PLAN_NODE_SCRIPTS_H_

// The shell text a plan runs or writes on a node: the env.sh file, the
// agent's launch command. Every value from the spec is quoted with
// tools/util/shell_quote.h. The preflight checks are in preflight_script.h;
// the paths on the node are tools/protocol/node_layout.h's.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tools/plan/rank_env.h"
#include "tools/protocol/node_layout.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

// The target name of a label: `//trainer:train` → "train", `//pkg/sub` → "sub".
std::string LabelTargetName(absl::string_view label);

// The program the agent starts on `node`: <workdir>/.fleetplan/bin/<target>
// for a label, the path itself when absolute, else <workdir>/<path>.
std::string ProgramPath(const JobSpec& job, const NodeSpec& node);

// The sh lines that activate `python` (none for PythonEnv::Kind::kNone).
std::string PythonActivation(const PythonEnv& python);

// The `export NAME=value` lines of `node_env` (group values expanded on the
// node).
std::string EnvExports(const std::vector<NodeVar>& node_env);

// A POSIX sh script, sourced before ranks start, that activates the node's
// python and exports `node_env`; with `nccl_auto` it then sources the
// node's preflight.env, where preflight wrote the NCCL_SOCKET_IFNAME it
// found.
std::string EnvScript(const NodeSpec& node, const std::vector<NodeVar>& node_env,
                      bool nccl_auto);

// The command that starts the node's agent, which starts its ranks.
std::string LaunchCommand(const JobSpec& job, const NodeSpec& node,
                          int first_rank);

// Creates ~/.ssh/id_ed25519 when missing and prints its public key.
std::string EnsureKeyCommand();

// `bazel build <label>`.
std::string BazelBuildCommand(absl::string_view label);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PLAN_NODE_SCRIPTS_H_
