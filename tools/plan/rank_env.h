#ifndef FLEETPLAN_TOOLS_PLAN_RANK_ENV_H_
#define FLEETPLAN_TOOLS_PLAN_RANK_ENV_H_

// The environment every rank starts with, derived from the spec as under
// torchrun. Layers, each overriding the one before:
//   1. defaults: OMP_NUM_THREADS=1 (node runs more than one rank),
//      TORCH_NCCL_ASYNC_ERROR_HANDLING=1;
//   2. [env];
//   3. the env of the settings groups the node picks (ClusterSpec::GroupEnv;
//      its `$VAR`s are expanded on the node);
//   4. [network]: NCCL_SOCKET_IFNAME (for "auto" none: preflight finds the
//      interface on each node and env.sh reads it from there, so a value
//      from [env] or a group is dropped too), NCCL_IB_DISABLE=1,
//      NCCL_P2P_DISABLE=1;
//   5. the torchrun contract: MASTER_ADDR, MASTER_PORT, WORLD_SIZE,
//      LOCAL_WORLD_SIZE, GROUP_RANK, CUDA_VISIBLE_DEVICES (node lists gpus),
//      and per rank RANK and LOCAL_RANK. The user cannot override these:
//      a wrong RANK would hang or corrupt the job rather than fail it.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
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

// The variables every rank of spec.nodes[node_index] shares (all but RANK
// and LOCAL_RANK), sorted by name. GROUP_RANK is `node_index`, MASTER_ADDR
// the address of `chief` (spec.chief()), and `world_size` the sum of nproc
// over all nodes. The caller finds both once for the cluster: spec.chief()
// scans the nodes, so calling it per node would cost O(N^2) for N nodes.
std::vector<NodeVar> NodeEnvironment(const ClusterSpec& spec, size_t node_index,
                                     const NodeSpec& chief, int world_size);

// The full environment of one rank: `node_env` plus RANK and LOCAL_RANK,
// sorted by name. Group values appear as written (unexpanded).
EnvList RankEnvironment(const std::vector<NodeVar>& node_env, int rank,
                        int local_rank);

// True for the variables rank layout owns, which no spec value overrides.
bool IsContractVariable(absl::string_view name);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PLAN_RANK_ENV_H_
