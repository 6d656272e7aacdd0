#ifndef FLEETPLAN_TOOLS_PLAN_RANK_ENV_H_
#define FLEETPLAN_TOOLS_PLAN_RANK_ENV_H_

// The environment every rank starts with, derived from the spec as under
// torchrun. Layers, each overriding the one before:
//   1. the launcher contract's defaults (launcher_contract.h NodeContract):
//      OMP_NUM_THREADS=1 (node runs more than one rank),
//      NCCL_ASYNC_ERROR_HANDLING=1, TORCH_NCCL_ASYNC_ERROR_HANDLING=1;
//   2. [env];
//   3. the env of the settings groups the node picks (ClusterSpec::GroupEnv;
//      its `$VAR`s are expanded on the node);
//   4. [network]: NCCL_SOCKET_IFNAME (for "auto" none: preflight finds the
//      interface on each node and env.sh reads it from there, so a value
//      from [env] or a group is dropped too), NCCL_IB_DISABLE=1,
//      NCCL_P2P_DISABLE=1;
//   5. the launcher's contract (tools/protocol/launcher_contract.h, [job]
//      launcher; torchrun's by default): its node-wide variables here, such
//      as MASTER_ADDR, MASTER_PORT, WORLD_SIZE; the per-rank ones (RANK,
//      LOCAL_RANK, ...) are set by the launch agent. The user cannot override
//      them: a wrong RANK would hang or corrupt the job rather than fail it.
//      And CUDA_VISIBLE_DEVICES where the node lists gpus, for every launcher.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tools/protocol/launcher_contract.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

// One variable of a node's environment.
struct NodeVar {
  std::string name;
  std::string value;
  // True for settings groups' values: `$NAME` in `value` is expanded on
  // the node.
  bool expand_on_node = false;
};

// The address the other nodes reach `node` by: its private_address, else its
// address. The chief's is MASTER_ADDR.
const std::string& ReachAddress(const NodeSpec& node);

// Where each node of the spec stands in the job's first generation: the
// nodes that are no spares, in file order (GROUP_RANK under torchrun),
// ranks numbered contiguously over them, as the agents place a
// generation's members (PlaceAmong in launcher_contract.h); MASTER_ADDR
// the chief's reach address. A spare is placed after them, as if it ran
// too: every generation that runs it tells it its place. All nodes at once,
// since spec.chief() and the sums scan the nodes (O(N) per node would cost
// O(N^2) for N nodes).
std::vector<GenerationPlace> PlannedPlaces(const ClusterSpec& spec);

// The variables every rank of spec.nodes[node_index] shares (all but the
// launcher's per-rank ones), sorted by name, the node at `place`
// (PlannedPlaces).
std::vector<NodeVar> NodeEnvironment(const ClusterSpec& spec, size_t node_index,
                                     const NodePlace& place);

// The full environment of one rank: `node_env` plus the rank's part of
// the launcher contract (launcher_contract.h ForRank), sorted by name. Group
// values appear as written (unexpanded).
EnvList RankEnvironment(const std::vector<NodeVar>& node_env, const ContractEnv& rank_env);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PLAN_RANK_ENV_H_
