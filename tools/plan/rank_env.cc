#include "tools/plan/rank_env.h"

#include <map>
#include <optional>

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

// Spec values for the launcher's variables are dropped; the contract sets them.
void SetList(VarMap& vars, const EnvList& env, Launcher launcher, bool expand_on_node) {
  for (const auto& [name, value] : env) {
    if (!IsContractVariable(launcher, name)) Set(vars, name, value, expand_on_node);
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

void SetContract(VarMap& vars, const NodeSpec& node, ContractEnv contract) {
  for (auto& [name, value] : contract) Set(vars, name, std::move(value));
  if (!node.gpus.empty()) {
    Set(vars, "CUDA_VISIBLE_DEVICES", absl::StrJoin(node.gpus, ","));
  }
}

}  // namespace

const std::string& ReachAddress(const NodeSpec& node) {
  return node.private_address.empty() ? node.address : node.private_address;
}

std::vector<GenerationPlace> PlannedPlaces(const ClusterSpec& spec) {
  std::vector<GenerationMember> members;
  for (const NodeSpec& node : spec.nodes) {
    if (!node.spare) members.push_back({node.name, node.nproc});
  }
  std::vector<GenerationPlace> places;
  places.reserve(spec.nodes.size());
  const std::string& master = ReachAddress(spec.chief());
  for (const NodeSpec& node : spec.nodes) {
    std::optional<GenerationPlace> found;
    if (node.spare) {
      // After the members, as if it ran too.
      members.push_back({node.name, node.nproc});
      found = PlaceAmong(members, node.name);
      members.pop_back();
    } else {
      found = PlaceAmong(members, node.name);
    }
    GenerationPlace& place = places.emplace_back(*found);
    place.place.master_addr = master;
    place.place.master_port = spec.network.master_port;
  }
  return places;
}

std::vector<NodeVar> NodeEnvironment(const ClusterSpec& spec, size_t node_index,
                                     const NodePlace& place) {
  const NodeSpec& node = spec.nodes[node_index];
  Launcher launcher = spec.job.launcher.launcher;
  NodeContractEnv contract = NodeContract(launcher, place);
  VarMap vars;
  for (auto& [name, value] : contract.defaults) Set(vars, name, std::move(value));
  SetList(vars, spec.env, launcher, /*expand_on_node=*/false);
  SetList(vars, spec.GroupEnv(node), launcher, /*expand_on_node=*/true);
  SetNetwork(vars, spec.network);
  SetContract(vars, node, std::move(contract.env));
  std::vector<NodeVar> env;
  env.reserve(vars.size());
  for (auto& [name, var] : vars) env.push_back(std::move(var));
  return env;
}

EnvList RankEnvironment(const std::vector<NodeVar>& node_env, const ContractEnv& rank_env) {
  EnvList env;
  env.reserve(node_env.size() + rank_env.size());
  auto next = rank_env.begin();
  // Both are sorted and share no name, so merge them.
  for (const NodeVar& var : node_env) {
    for (; next != rank_env.end() && next->first < var.name; ++next) env.push_back(*next);
    env.emplace_back(var.name, var.value);
  }
  env.insert(env.end(), next, rank_env.end());
  return env;
}

}  // namespace fleetplan
