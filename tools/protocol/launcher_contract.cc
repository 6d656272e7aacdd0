#include "tools/protocol/launcher_contract.h"

#include <algorithm>
#include <array>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "tools/protocol/job_state.h"
#include "tools/util/path_policy.h"

namespace fleetplan {
namespace {

constexpr std::array<std::pair<Launcher, absl::string_view>, 4> kNames = {{
    {Launcher::kTorchrun, "torchrun"},
    {Launcher::kDistributedLaunch, "distributed-launch"},
    {Launcher::kMpirun, "mpirun"},
    {Launcher::kDeepspeed, "deepspeed"},
}};

void Add(ContractEnv& env, absl::string_view name, std::string value) {
  env.emplace_back(std::string(name), std::move(value));
}

void Add(ContractEnv& env, absl::string_view name, int value) {
  Add(env, name, absl::StrCat(value));
}

ContractEnv Sorted(ContractEnv env) {
  std::sort(env.begin(), env.end());
  return env;
}

bool IsTorchFamily(Launcher launcher) {
  return launcher == Launcher::kTorchrun || launcher == Launcher::kDistributedLaunch;
}

// python, python3, python3.11: the interpreters whose first operand is the
// script a launcher's argument follows.
bool IsPython(absl::string_view path) {
  std::string name = Basename(path);
  absl::string_view base = name;
  if (!absl::ConsumePrefix(&base, "python")) return false;
  return std::all_of(base.begin(), base.end(),
                     [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

// The index after the script (or `-m module`, `-c command`) of a python
// command line; the interpreter's options before it may take a value.
size_t AfterPythonScript(const std::vector<std::string>& program) {
  for (size_t i = 1; i < program.size(); ++i) {
    const std::string& arg = program[i];
    if (arg == "-m" || arg == "-c") return std::min(i + 2, program.size());
    if (arg == "-W" || arg == "-X") {
      ++i;  // the option's value
    } else if (arg.empty() || arg == "-" || arg[0] != '-') {
      return i + 1;
    }
  }
  return program.size();
}

}  // namespace

absl::string_view LauncherName(Launcher launcher) {
  for (const auto& [value, name] : kNames) {
    if (value == launcher) return name;
  }
  return "torchrun";
}

std::optional<Launcher> ParseLauncher(absl::string_view name) {
  for (const auto& [value, known] : kNames) {
    if (known == name) return value;
  }
  return std::nullopt;
}

std::vector<std::string> LauncherNames() {
  std::vector<std::string> names;
  for (const auto& entry : kNames) names.emplace_back(entry.second);
  return names;
}

absl::string_view DefaultLocalRankArg(Launcher launcher) {
  switch (launcher) {
    case Launcher::kDistributedLaunch:
      return "--local-rank";
    case Launcher::kDeepspeed:
      return "--local_rank";
    case Launcher::kTorchrun:
    case Launcher::kMpirun:
      break;
  }
  return "";
}

NodeContractEnv NodeContract(Launcher launcher, const NodePlace& place) {
  NodeContractEnv contract;
  ContractEnv& env = contract.env;
  Add(env, "MASTER_ADDR", place.master_addr);
  Add(env, "MASTER_PORT", place.master_port);
  switch (launcher) {
    case Launcher::kTorchrun:
    case Launcher::kDistributedLaunch:
      Add(env, "WORLD_SIZE", place.world_size);
      Add(env, "LOCAL_WORLD_SIZE", place.local_world_size);
      Add(env, "GROUP_RANK", place.node_rank);
      Add(env, "GROUP_WORLD_SIZE", place.num_nodes);
      // torchrun's role when none is given (`--role`).
      Add(env, "ROLE_NAME", std::string("default"));
      Add(env, "ROLE_WORLD_SIZE", place.world_size);
      // torchrun says "True" only with its static rendezvous, where its
      // agent hosts the TCPStore at MASTER_PORT; no agent of fleetplan hosts
      // one, so rank 0 must (as under torchrun's c10d rendezvous): with
      // "True" every rank would wait for a store that never comes.
      Add(env, "TORCHELASTIC_USE_AGENT_STORE", std::string("False"));
      break;
    case Launcher::kMpirun:
      Add(env, "OMPI_COMM_WORLD_SIZE", place.world_size);
      Add(env, "OMPI_COMM_WORLD_LOCAL_SIZE", place.local_world_size);
      Add(env, "OMPI_UNIVERSE_SIZE", place.world_size);
      break;
    case Launcher::kDeepspeed:
      Add(env, "WORLD_SIZE", place.world_size);
      Add(env, "CROSS_RANK", place.node_rank);
      Add(env, "CROSS_SIZE", place.num_nodes);
      Add(env, "LOCAL_SIZE", place.local_world_size);
      break;
  }
  contract.env = Sorted(std::move(env));
  // Both spellings: PyTorch 1.13 reads the first, 2.x the second. Without
  // them a rank whose NCCL peer died waits in a collective forever.
  Add(contract.defaults, "NCCL_ASYNC_ERROR_HANDLING", 1);
  Add(contract.defaults, "TORCH_NCCL_ASYNC_ERROR_HANDLING", 1);
  // torchrun's choice for several ranks per node, so they do not
  // oversubscribe its cores.
  if (place.local_world_size > 1) Add(contract.defaults, "OMP_NUM_THREADS", 1);
  contract.defaults = Sorted(std::move(contract.defaults));
  return contract;
}

RankContract ForRank(const LauncherConfig& config, int rank, int local_rank,
                     const Generation& generation, const std::vector<std::string>& program) {
  RankContract contract;
  ContractEnv& env = contract.env;
  if (config.launcher == Launcher::kMpirun) {
    Add(env, "OMPI_COMM_WORLD_RANK", rank);
    Add(env, "OMPI_COMM_WORLD_LOCAL_RANK", local_rank);
    Add(env, "OMPI_COMM_WORLD_NODE_RANK", local_rank);
  } else {
    Add(env, "RANK", rank);
    Add(env, "LOCAL_RANK", local_rank);
  }
  if (IsTorchFamily(config.launcher)) {
    Add(env, "ROLE_RANK", rank);
    Add(env, "TORCHELASTIC_RUN_ID", generation.run_id);
    Add(env, "TORCHELASTIC_RESTART_COUNT", generation.restart_count);
    Add(env, "TORCHELASTIC_MAX_RESTARTS", generation.max_restarts);
  }
  // Every launcher's ranks may use @record; a file per generation, so a
  // restart never reads the last one's exception.
  Add(env, "TORCHELASTIC_ERROR_FILE",
      RankErrorPath(generation.run_dir, rank, generation.restart_count));
  contract.env = Sorted(std::move(env));
  absl::string_view arg_name = config.local_rank_arg.empty()
                                   ? DefaultLocalRankArg(config.launcher)
                                   : absl::string_view(config.local_rank_arg);
  if (DefaultLocalRankArg(config.launcher).empty() || arg_name.empty()) {
    contract.argv = program;
  } else {
    contract.argv = InsertLauncherArg(program, absl::StrCat(arg_name, "=", local_rank));
  }
  return contract;
}

std::optional<GenerationPlace> PlaceAmong(const std::vector<GenerationMember>& members,
                                          absl::string_view node) {
  std::optional<GenerationPlace> found;
  int world_size = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].node == node && !found.has_value()) {
      found = GenerationPlace();
      found->place.node_rank = static_cast<int>(i);
      found->place.local_world_size = members[i].nproc;
      found->first_rank = world_size;
    }
    world_size += members[i].nproc;
  }
  if (!found.has_value()) return std::nullopt;
  found->place.num_nodes = static_cast<int>(members.size());
  found->place.world_size = world_size;
  return found;
}

ContractEnv GenerationContract(Launcher launcher, const NodePlace& place) {
  ContractEnv env;
  for (auto& [name, value] : NodeContract(launcher, place).env) {
    if (name == "MASTER_ADDR" || name == "MASTER_PORT") continue;
    env.emplace_back(name, std::move(value));
  }
  return env;
}

bool IsContractVariable(Launcher launcher, absl::string_view name) {
  // The names, found once per launcher from the contract itself.
  static const auto* const kNamesByLauncher = [] {
    auto* names = new std::array<std::vector<std::string>, kNames.size()>;
    for (size_t i = 0; i < kNames.size(); ++i) {
      for (const auto& [var, value] : NodeContract(kNames[i].first, NodePlace()).env) {
        (*names)[i].push_back(var);
      }
      for (const auto& [var, value] :
           ForRank(LauncherConfig{kNames[i].first, ""}, 0, 0, Generation(), {}).env) {
        (*names)[i].push_back(var);
      }
    }
    return names;
  }();
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i].first != launcher) continue;
    const std::vector<std::string>& names = (*kNamesByLauncher)[i];
    return std::find(names.begin(), names.end(), name) != names.end();
  }
  return false;
}

std::vector<std::string> InsertLauncherArg(const std::vector<std::string>& program,
                                           const std::string& arg) {
  if (program.empty()) return {arg};
  size_t at = IsPython(program[0]) ? AfterPythonScript(program) : 1;
  std::vector<std::string> argv;
  argv.reserve(program.size() + 1);
  argv.insert(argv.end(), program.begin(), program.begin() + at);
  argv.push_back(arg);
  argv.insert(argv.end(), program.begin() + at, program.end());
  return argv;
}

}  // namespace fleetplan
