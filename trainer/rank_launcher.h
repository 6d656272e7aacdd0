#ifndef FLEETPLAN_TRAINER_RANK_LAUNCHER_H_
#define FLEETPLAN_TRAINER_RANK_LAUNCHER_H_

// Test support: runs ranks of //trainer:train as separate processes on
// 127.0.0.1 with the torchrun environment, and collects their JSON lines.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace fleetplan::trainer {

struct RankOutput {
  int exit_status = -1;              // 128 + N when killed by signal N
  std::vector<nlohmann::json> lines;  // the JSON lines, in order
  std::string text;                   // everything else it printed
};

struct LaunchOptions {
  int world_size = 1;
  std::vector<std::string> args;  // flags for every rank
  // More flags for rank i, after `args` (e.g. a checkpoint directory of
  // its own, as on a node of its own).
  std::vector<std::vector<std::string>> rank_args;
  // Ranks to start (default: all of 0..world_size-1), e.g. only rank 1 to
  // test a missing master.
  std::vector<int> ranks;
  int master_port = 0;  // 0: a free one
  // false: start one process without the torchrun variables.
  bool distributed_env = true;
  absl::Duration timeout = absl::Minutes(5);
  // Called on each JSON line as it arrives; returning true SIGKILLs all ranks.
  std::function<bool(int rank, const nlohmann::json& line)> kill_when;
};

// The path of the train binary in this test's runfiles.
std::string TrainBinary();

// A TCP port on 127.0.0.1 that nothing listens on right now.
int FreePort();

// Runs the ranks until all exit (or are killed by kill_when). Returns one
// RankOutput per started rank; DeadlineExceeded (after killing them) when
// they run past the timeout.
absl::StatusOr<std::vector<RankOutput>> LaunchRanks(
    const LaunchOptions& options);

// The lines of `output` whose "event" is `event`.
std::vector<nlohmann::json> Events(const RankOutput& output,
                                   const std::string& event);

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_RANK_LAUNCHER_H_
