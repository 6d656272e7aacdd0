#ifndef FLEETPLAN_TRAINER_RANK_ZERO_RESUME_H_
#define FLEETPLAN_TRAINER_RANK_ZERO_RESUME_H_

// Resuming from a checkpoint, at any world size. Only rank 0 reads the
// checkpoint: the launcher places it on the chief, whose checkpoint
// directory outlives the loss of any other node, and it sends every other
// rank what it needs over the process group. A rank's own checkpoint
// directory (missing, empty or stale on a replacement node) never matters.

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "trainer/checkpoint.h"
#include "trainer/dataset.h"

namespace fleetplan::trainer {

// The resuming run, to check a checkpoint against.
struct ResumeRun {
  std::string checkpoint_dir;
  std::string dataset;
  uint64_t seed = 0;
  int rank = 0;
  int world_size = 1;
  int64_t batch_size = 0;  // per rank
};

// Where a resumed run starts, and what its checkpoint recorded.
struct ResumePoint {
  TrainingPosition start;
  int64_t checkpoint_step = 0;  // at the writer's world size
  int checkpoint_world_size = 1;
};

// Checks that `info`, read from run.checkpoint_dir, fits this run and
// returns where it resumes (an epoch's end is the next epoch's start). A
// legacy checkpoint is taken as written at this run's world size, batch,
// data set and seed, the only ones the old trainer resumed with.
// FailedPrecondition for another data set or seed; DataLoss for a position
// the data does not have.
absl::StatusOr<ResumePoint> ResumePointOf(const CheckpointInfo& info,
                                          const ResumeRun& run,
                                          const TrainData& data);

// Rank 0 loads the checkpoint into `model` and `optimizer` and checks it;
// then every rank gets the resume point and rank 0's optimizer state
// (momentum buffers) over `group` (null for a single process). The model's
// parameters and buffers reach the other ranks with DataParallel::Create's
// broadcast from rank 0, as the initial weights do. Nullopt when rank 0 has
// no checkpoint. Rank 0 returns why its checkpoint is unusable; the others
// FailedPrecondition pointing at rank 0; Internal when a collective fails.
absl::StatusOr<std::optional<ResumePoint>> ResumeFromRankZero(
    const ResumeRun& run, c10d::ProcessGroup* group, const TrainData& data,
    torch::nn::Module& model, torch::optim::SGD& optimizer);

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_RANK_ZERO_RESUME_H_
