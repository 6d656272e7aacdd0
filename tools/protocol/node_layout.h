#ifndef FLEETPLAN_TOOLS_PROTOCOL_NODE_LAYOUT_H_
#define FLEETPLAN_TOOLS_PROTOCOL_NODE_LAYOUT_H_

// Where fleetplan keeps its files on a node: everything is under the
// node's workdir, in a state folder that sync never sends nor deletes.
//
//   <workdir>/.fleetplan/bin/fleetplan-agent        the launch agent
//   <workdir>/.fleetplan/bin/<target>               a program the build phase built
//   <workdir>/.fleetplan/nodes/<node>/env.sh        the ranks' environment
//   <workdir>/.fleetplan/nodes/<node>/preflight.env what preflight found for env.sh
//   <workdir>/.fleetplan/nodes/<node>/secrets.env   the [secrets] values (0600)
//   <workdir>/.fleetplan/nodes/<node>/manifest      what the last sync sent
//   <workdir>/.fleetplan/nodes/<node>/steps/<phase> hash of the last successful step
//   <workdir>/.fleetplan/nodes/<node>/logs/         the agent's log directory
//   <workdir>/.fleetplan/nodes/<node>/job.key       the job's key (0600, apply's latest)
//
// apply writes and reads these paths through the transports; the plan puts
// them into the commands it runs on the node. Changing one strands what
// earlier applies left on the nodes.

#include <string>

#include "absl/strings/string_view.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

// The state folder's name, relative to the workdir.
inline constexpr absl::string_view kStateDirName = ".fleetplan";

// The launch agent's file name in the bin folder.
inline constexpr absl::string_view kAgentFileName = "fleetplan-agent";

// The variable env.sh sets to the [secrets] names, comma-separated (never
// a value): the launch agent reads the values of these variables from its
// environment to hide them in the ranks' output (tools/agent/redactor.h).
inline constexpr absl::string_view kSecretNamesVar = "FLEETPLAN_SECRET_NAMES";

// `relative` under the node's workdir.
std::string UnderWorkdir(const NodeSpec& node, absl::string_view relative);

// .fleetplan/bin/<file>, relative to the workdir: where sync puts the agent
// and built programs.
std::string BinRelativePath(absl::string_view file);

// <workdir>/.fleetplan/bin/<file>
std::string BinPath(const NodeSpec& node, absl::string_view file);

// <workdir>/.fleetplan/bin/fleetplan-agent: the launch agent, synced there.
std::string AgentPath(const NodeSpec& node);

// <workdir>/.fleetplan/apply.lock, on the chief: who applies the spec now
// (tools/protocol/state_lock_record.h).
std::string StateLockPath(const NodeSpec& chief);

// <workdir>/.fleetplan/nodes/<name>: what apply keeps on the node about it.
std::string NodeStateDir(const NodeSpec& node);

// <workdir>/.fleetplan/nodes/<name>/<file>
std::string NodeStatePath(const NodeSpec& node, absl::string_view file);

// <workdir>/.fleetplan/nodes/<name>/env.sh
std::string EnvScriptPath(const NodeSpec& node);

// <workdir>/.fleetplan/nodes/<name>/preflight.env: what preflight found out
// on the node for its ranks (NCCL_SOCKET_IFNAME = "auto"), sourced by env.sh.
std::string PreflightEnvPath(const NodeSpec& node);

// <workdir>/.fleetplan/nodes/<name>/secrets.env: the [secrets] values as
// `export NAME='value'` lines, mode 0600, written by apply through the
// transport and sourced by env.sh.
std::string SecretsPath(const NodeSpec& node);

// <workdir>/.fleetplan/nodes/<name>/manifest: what the last sync sent.
std::string SyncManifestPath(const NodeSpec& node);

// steps/<phase>, relative to NodeStateDir: the hash of the node's last
// successful step of the phase named `phase` (PhaseName in plan.h).
std::string StepRecordName(absl::string_view phase);

// <workdir>/.fleetplan/nodes/<name>/steps/<phase>
std::string StepRecordPath(const NodeSpec& node, absl::string_view phase);

// <workdir>/.fleetplan/nodes/<name>/job.key: the key the node's agents
// prove to each other (tools/secure/job_key.h); written by apply through
// the transport, mode 0600.
std::string JobKeyPath(const NodeSpec& node);

// <workdir>/.fleetplan/nodes/<name>/logs: the agent's --log-dir.
std::string NodeLogDir(const NodeSpec& node);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_NODE_LAYOUT_H_
