#ifndef FLEETPLAN_TOOLS_PLAN_PREFLIGHT_SCRIPT_H_
#define FLEETPLAN_TOOLS_PLAN_PREFLIGHT_SCRIPT_H_

// The preflight checks of one node: a POSIX sh script (nodes may have dash),
// PreflightLibrary (the functions every node's checks share, which a plan
// holds once as its preflight phase's preamble) followed by the node's own
// PreflightScript. It runs every check, never stops at the first failure,
// and prints one line per check and fact in the form check_line.h
// describes. It exits 1 when one of its checks failed, else 0.
//
// Checks (names as in check_line.h):
//   workdir    creatable and writable at its absolute path, with room for
//              the synced sources;
//   port       (chief) MASTER_PORT can be bound: the launch agent listens
//              on it until every node has connected;
//   connect    a real TCP connection to MASTER_ADDR:MASTER_PORT;
//   nccl       (nccl_socket_ifname = "auto") the interface that holds the
//              address the other nodes reach this node by; never lo or
//              docker0; fact `nccl_socket_ifname <interface>`;
//   python     the venv or conda environment exists and activates;
//   gpus       (node lists gpus) every listed id is one nvidia-smi lists;
//              skipped with a note without nvidia-smi;
//   libraries  every shared library of the job's program resolves (ldd);
//              fact `libtorch <cksum> <size> <path>` for libtorch_cpu.
// The python, gpus and libraries checks run in the ranks' environment (the
// python activation and exports env.sh makes), so [env] PATH and
// LD_LIBRARY_PATH count.

#include <cstdint>
#include <string>
#include <vector>

#include "tools/plan/rank_env.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

enum class PreflightMode {
  // In apply, after sync: creates the node's state folder and writes
  // preflight.env (NCCL_SOCKET_IFNAME) there.
  kApply,
  // `plan --check`: writes nothing. A missing workdir passes when its
  // nearest existing parent is writable; a program or launch agent that is
  // not on the node yet is skipped with a note.
  kCheckOnly,
};

// What a node's preflight needs to know about the cluster.
struct PreflightInputs {
  PreflightMode mode = PreflightMode::kApply;
  const NodeSpec* chief = nullptr;  // listens on master_port; all connect to it
  int master_port = 29500;
  int nodes = 1;  // connections the chief's listener waits for
  bool nccl_auto = false;
  const JobSpec* job = nullptr;  // whose program's libraries are checked
  uint64_t sync_bytes = 0;       // size of the synced sources
};

// The shell functions of the checks, the same for every node.
std::string PreflightLibrary(PreflightMode mode);

// The checks of `node`, whose ranks share `node_env`: calls of the
// library's functions, to run after PreflightLibrary(inputs.mode).
std::string PreflightScript(const NodeSpec& node, const std::vector<NodeVar>& node_env,
                            const PreflightInputs& inputs);

// The workdir check alone, library included, in apply mode: the node's
// workdir (and state folder) can be created and written, and `bytes` more
// fit on its filesystem. Run before a sync sends anything.
std::string WorkdirCheckScript(const NodeSpec& node, uint64_t bytes);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PLAN_PREFLIGHT_SCRIPT_H_
