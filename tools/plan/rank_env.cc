#include "tools/plan/rank_env.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fleetplan {
namespace {

using VarMap = std::map<std::string, NodeVar, std::less<>>;

void Set(VarMap& vars, absl::string_view name, std::string value,
         bool expand_on_node = false) {
  NodeVar& var = vars[std::string(name)];
  var.name = std::string(name);
  var.value = std::move(value);
  var.expand_on_node = expand_on_node;
}

// Spec values for contract variables are dropped; the contract sets them.
void SetList(VarMap& vars, const EnvList& env, bool expand_on_node) {
  for (const auto& [name, value] : env) {
    if (!IsContractVariable(name)) Set(vars, name, value, expand_on_node);
  }
}

void SetNetwork(VarMap& vars, const NetworkSpec& network) {
  if (network.nccl_socket_ifname == "auto") {
    // Known only on the node, once preflight has looked: no value here may
    // claim otherwise.
    vars.erase("NCCL_SOCKET_IFNAME");
  } else if (!network.nccl_socket_ifname.empty()) {
    Set(vars, "NCCL_SOCKET_IFNAME", network.nccl_socket_ifname);
  }
  if (network.ib.has_value() && !*network.ib) Set(vars, "NCCL_IB_DISABLE", "1");
  if (network.p2p.has_value() && !*network.p2p) {
    Set(vars, "NCCL_P2P_DISABLE", "1");
  }
}

void SetContract(VarMap& vars, const ClusterSpec& spec, size_t node_index,
                 const NodeSpec& chief, int world_size) {
  const NodeSpec& node = spec.nodes[node_index];
  Set(vars, "MASTER_ADDR", ReachAddress(chief));
  Set(vars, "MASTER_PORT", absl::StrCat(spec.network.master_port));
  Set(vars, "WORLD_SIZE", absl::StrCat(world_size));
  Set(vars, "LOCAL_WORLD_SIZE", absl::StrCat(node.nproc));
  Set(vars, "GROUP_RANK", absl::StrCat(node_index));
  if (!node.gpus.empty()) {
    Set(vars, "CUDA_VISIBLE_DEVICES", absl::StrJoin(node.gpus, ","));
  }
}

}  // namespace

const std::string& ReachAddress(const NodeSpec& node) {
  return node.private_address.empty() ? node.address : node.private_address;
}

bool IsContractVariable(absl::string_view name) {
  return name == "RANK" || name == "LOCAL_RANK" || name == "WORLD_SIZE" ||
         name == "LOCAL_WORLD_SIZE" || name == "GROUP_RANK" ||
         name == "MASTER_ADDR" || name == "MASTER_PORT";
}

std::vector<NodeVar> NodeEnvironment(const ClusterSpec& spec, size_t node_index,
                                     const NodeSpec& chief, int world_size) {
  const NodeSpec& node = spec.nodes[node_index];
  VarMap vars;
  if (node.nproc > 1) Set(vars, "OMP_NUM_THREADS", "1");
  Set(vars, "TORCH_NCCL_ASYNC_ERROR_HANDLING", "1");
  SetList(vars, spec.env, /*expand_on_node=*/false);
  SetList(vars, spec.GroupEnv(node), /*expand_on_node=*/true);
  SetNetwork(vars, spec.network);
  SetContract(vars, spec, node_index, chief, world_size);
  std::vector<NodeVar> env;
  env.reserve(vars.size());
  for (auto& [name, var] : vars) env.push_back(std::move(var));
  return env;
}

EnvList RankEnvironment(const std::vector<NodeVar>& node_env, int rank,
                        int local_rank) {
  EnvList env;
  env.reserve(node_env.size() + 2);
  std::pair<std::string, std::string> per_rank[] = {
      {"LOCAL_RANK", absl::StrCat(local_rank)}, {"RANK", absl::StrCat(rank)}};
  size_t next = 0;
  // node_env is sorted and has neither name, so merge the two in.
  for (const NodeVar& var : node_env) {
    while (next < 2 && per_rank[next].first < var.name) {
      env.push_back(std::move(per_rank[next++]));
    }
    env.emplace_back(var.name, var.value);
  }
  while (next < 2) env.push_back(std::move(per_rank[next++]));
  return env;
}

}  // namespace fleetplan
