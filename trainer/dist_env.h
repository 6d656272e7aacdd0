#ifndef FLEETPLAN_TRAINER_DIST_ENV_H_
#define FLEETPLAN_TRAINER_DIST_ENV_H_

// The torchrun environment contract: where this rank sits in the job and
// where the rendezvous master listens.

#include <functional>
#include <string>

#include "absl/status/statusor.h"

namespace fleetplan::trainer {

struct DistEnv {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  int local_world_size = 1;
  std::string master_addr;
  int master_port = 0;

  bool distributed() const { return world_size > 1; }
};

// Looks a variable up; nullptr when unset.
using EnvLookup = std::function<const char*(const char*)>;

// Reads RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and
// MASTER_PORT. With none set: a single process (rank 0 of 1). Otherwise
// RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT are required; LOCAL_RANK
// defaults to RANK and LOCAL_WORLD_SIZE to WORLD_SIZE. InvalidArgument names
// the variable that is missing, not a number, or out of range.
absl::StatusOr<DistEnv> DistEnvFromEnvironment(const EnvLookup& lookup);

// The same, from this process's environment.
absl::StatusOr<DistEnv> DistEnvFromEnvironment();

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_DIST_ENV_H_
