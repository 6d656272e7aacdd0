#ifndef FLEETPLAN_TOOLS_PLAN_PREFLIGHT_SCRIPT_H_
#define FLEETPLAN_TOOLS_PLAN_PREFLIGHT_SCRIPT_H_

// The shell around a node's preflight checks. The checks themselves are
// the launch agent's (tools/agent/preflight.h, `fleetplan-agent preflight
// --request=<json>`); what stays shell is what must happen in the user's
// shell: activating the venv or conda env (noting whether it worked) and
// exporting what env.sh exports, so that the agent, and the loader and
// nvidia-smi it runs, see the ranks' PATH and LD_LIBRARY_PATH.
//
// Output: the lines of tools/protocol/check_line.h. Where the agent cannot
// run its checks (not on the node yet, or it ended abnormally) the script
// prints an `agent` check: skip under `plan --check`, fail in apply. It
// exits 1 when a check failed, else 0.

#include <cstdint>
#include <string>
#include <vector>

#include "tools/plan/rank_env.h"
#include "tools/protocol/preflight_request.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

enum class PreflightMode {
  // In apply, after sync: the agent is on the node; it creates the node's
  // state folder and writes preflight.env (NCCL_SOCKET_IFNAME) there.
  kApply,
  // `plan --check`: writes nothing. A missing workdir passes when its
  // nearest existing parent is writable; a program not on the node yet is
  // skipped, and so is every check when the agent is not there yet.
  kCheckOnly,
};

// What a node's preflight needs to know about the cluster.
struct PreflightInputs {
  PreflightMode mode = PreflightMode::kApply;
  const NodeSpec* chief = nullptr;  // listens on both ports; all connect to it
  int master_port = 29500;
  int supervisor_port = 29501;
  int nodes = 1;  // connections the chief's listeners wait for
  bool nccl_auto = false;
  const JobSpec* job = nullptr;  // whose program's libraries are checked
  uint64_t sync_bytes = 0;       // size of the synced sources
};

// The shell function the scripts share (fp_check prints a check line),
// which a plan holds once as its preflight phase's preamble.
std::string PreflightLibrary();

// What the agent on `node` is asked to check.
PreflightRequest PreflightRequestFor(const NodeSpec& node, const PreflightInputs& inputs);

// The node's script, to run after PreflightLibrary(): the python
// activation, the exports of `node_env`, then the agent's checks.
std::string PreflightScript(const NodeSpec& node, const std::vector<NodeVar>& node_env,
                            const PreflightInputs& inputs);

// The workdir check alone, run before a sync sends anything (the agent
// arrives with that sync, so this one is shell, with POSIX tools only: no
// awk): the node's workdir (and state folder) can be created and written,
// and `bytes` more fit on its filesystem. Free space that df cannot tell
// makes it a skip, never ok; the agent's check after the sync measures it.
std::string WorkdirCheckScript(const NodeSpec& node, uint64_t bytes);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PLAN_PREFLIGHT_SCRIPT_H_
