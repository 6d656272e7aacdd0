#ifndef FLEETPLAN_TOOLS_PROTOCOL_LAUNCHER_CONTRACT_H_
#define FLEETPLAN_TOOLS_PROTOCOL_LAUNCHER_CONTRACT_H_

// What a rank sees of the launcher it was written for ([job] launcher), so
// that scripts written for torchrun, torch.distributed.launch, mpirun or
// deepspeed run unchanged. Computed here, once, for both sides: the plan
// writes the node-wide part into env.sh and shows every rank's whole
// contract in `plan --json`; the launch agent sets the per-rank part when
// it starts each rank of each generation. Only the chosen launcher's
// variables are set: frameworks (Lightning, Accelerate) tell launchers
// apart by which variables exist.
//
//   torchrun            (torch/distributed/elastic/agent/server/
//                       local_elastic_agent.py, worker_env) MASTER_ADDR,
//                       MASTER_PORT, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,
//                       GROUP_WORLD_SIZE, ROLE_NAME, ROLE_WORLD_SIZE,
//                       TORCHELASTIC_USE_AGENT_STORE; per rank RANK,
//                       LOCAL_RANK, ROLE_RANK; per generation
//                       TORCHELASTIC_RUN_ID, TORCHELASTIC_RESTART_COUNT,
//                       TORCHELASTIC_MAX_RESTARTS
//   distributed-launch  the same, and `--local-rank=N` (or local_rank_arg)
//                       after the script, before the job's own arguments
//   mpirun              MASTER_ADDR, MASTER_PORT (as `mpirun -x` passes them),
//                       OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_SIZE,
//                       OMPI_UNIVERSE_SIZE; per rank OMPI_COMM_WORLD_RANK,
//                       OMPI_COMM_WORLD_LOCAL_RANK, OMPI_COMM_WORLD_NODE_RANK
//                       (Open MPI's "rank on this node across all jobs": with
//                       one job, the local rank)
//   deepspeed           MASTER_ADDR, MASTER_PORT, WORLD_SIZE, CROSS_RANK (the
//                       node's index), CROSS_SIZE (nodes), LOCAL_SIZE; per rank
//                       RANK, LOCAL_RANK, and `--local_rank=N`
//   every launcher      per rank and generation TORCHELASTIC_ERROR_FILE (where
//                       torch's @record writes the rank's exception, read back
//                       by the agent when the rank fails; no framework tells
//                       launchers apart by it); defaults a spec's [env] may
//                       override, as torchrun keeps the caller's:
//                       NCCL_ASYNC_ERROR_HANDLING=1 (PyTorch 1.13's spelling)
//                       and TORCH_NCCL_ASYNC_ERROR_HANDLING=1 (2.x's), and
//                       OMP_NUM_THREADS=1 where the node runs several ranks

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace fleetplan {

enum class Launcher { kTorchrun, kDistributedLaunch, kMpirun, kDeepspeed };

// "torchrun", "distributed-launch", "mpirun", "deepspeed".
absl::string_view LauncherName(Launcher launcher);
// The launcher named `name`, or nullopt.
std::optional<Launcher> ParseLauncher(absl::string_view name);
// Every launcher's name, in the order above.
std::vector<std::string> LauncherNames();

// The launcher and how it spells the local-rank argument.
struct LauncherConfig {
  Launcher launcher = Launcher::kTorchrun;
  // The argument's name ("--local_rank"); empty: the launcher's own
  // (DefaultLocalRankArg). Used only by launchers that pass one.
  std::string local_rank_arg;
};

// "--local-rank" for distributed-launch (torch 2's spelling), "--local_rank"
// for deepspeed, "" for launchers that pass no argument.
absl::string_view DefaultLocalRankArg(Launcher launcher);

// Where a node stands in the job: the same for every rank it runs.
struct NodePlace {
  int node_rank = 0;  // the node's index, in spec order
  int num_nodes = 1;
  int world_size = 1;        // ranks in the job
  int local_world_size = 1;  // ranks on this node
  std::string master_addr;
  int master_port = 0;
};

// What a rank's generation brings, known only at run time: the run id is
// chosen at launch, the restart count per generation.
struct Generation {
  std::string run_id;
  int restart_count = 0;
  int max_restarts = 0;
  // The run's log folder on the node (RunDir in job_state.h): each rank's
  // error file goes there (RankErrorPath).
  std::string run_dir;
};

// The run id `plan --json` shows: the real one is chosen at launch.
inline constexpr absl::string_view kPlannedRunId = "<run-id>";

using ContractEnv = std::vector<std::pair<std::string, std::string>>;

// What every rank of the node shares, each part sorted by name (env.sh
// exports both).
struct NodeContractEnv {
  ContractEnv env;       // the launcher's own: nothing in the spec overrides them
  ContractEnv defaults;  // a spec's [env] or settings group may set its own
};
NodeContractEnv NodeContract(Launcher launcher, const NodePlace& place);

// One rank's part: its own variables and those of its generation, sorted by
// name, and its command line.
struct RankContract {
  ContractEnv env;
  std::vector<std::string> argv;
};

// The rank `rank` (`local_rank` on its node) of `generation`, started as
// `program` (the job's program and args) under `config`.
RankContract ForRank(const LauncherConfig& config, int rank, int local_rank,
                     const Generation& generation, const std::vector<std::string>& program);

// A node taking part in a generation of an elastic job, and its ranks.
struct GenerationMember {
  std::string node;
  int nproc = 1;
};

// Where a node stands in one generation: its place among the generation's
// members and the RANK of its LOCAL_RANK 0.
struct GenerationPlace {
  NodePlace place;
  int first_rank = 0;
};

// Where `node` stands among `members` (in their order, ranks numbered
// contiguously from the first), as the plan would place a job of exactly
// those nodes; nullopt when `node` is none of them (a spare, or a node
// waiting to rejoin). master_addr and master_port are left empty: the chief
// holds the job's master in every generation.
std::optional<GenerationPlace> PlaceAmong(const std::vector<GenerationMember>& members,
                                          absl::string_view node);

// The part of a node's contract (NodeContract's env) that a generation's
// membership changes: all of it but MASTER_ADDR and MASTER_PORT, which the
// ranks keep from env.sh. Sorted by name.
ContractEnv GenerationContract(Launcher launcher, const NodePlace& place);

// True for the names `launcher` sets (node-wide or per rank; not the
// defaults): a value from
// the spec never overrides them, since a wrong RANK hangs or corrupts a job
// rather than failing it.
bool IsContractVariable(Launcher launcher, absl::string_view name);

// `program` with `arg` put where a launcher puts it: right after the script
// when program[0] is a python interpreter (`python3 [options] script.py` or
// `python3 -m module`), else right after program[0].
std::vector<std::string> InsertLauncherArg(const std::vector<std::string>& program,
                                           const std::string& arg);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_LAUNCHER_CONTRACT_H_
