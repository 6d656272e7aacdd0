#ifndef FLEETPLAN_TRAINER_CHECKPOINT_H_
#define FLEETPLAN_TRAINER_CHECKPOINT_H_

// Checkpoints: model and optimizer state plus where training stood, in
// terms that hold at any world size (the epoch and the position in it, see
// dataset.h), with the world size, batch, data set and seed it was written
// with. Rank 0 writes them and alone reads them back (rank_zero_resume.h).

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fleetplan::trainer {

// Where training stood.
struct TrainingPosition {
  int64_t epoch = 0;     // the epoch under way (the next, once one ended)
  int64_t position = 0;  // in it, in the data's units (dataset.h)
};

struct CheckpointInfo {
  TrainingPosition at;
  int64_t step = 0;  // optimizer steps, counted at the writer's world size
  int world_size = 1;
  int64_t batch_size = 0;  // per rank
  std::string dataset;     // "fashion-mnist" | "synthetic"
  uint64_t seed = 0;       // of the shuffling
  // Written before the position was recorded: only `step` is known, and
  // the rest is to be taken from the resuming run (rank_zero_resume.h).
  bool legacy = false;
};

// The one checkpoint file in `dir` (each save replaces it).
std::string CheckpointPath(const std::string& dir);

// Writes `model`, `optimizer` and `info` to a temporary file in `dir` and
// renames it over the checkpoint, so a reader (or a resume after a crash)
// sees the old checkpoint or the new one, never half of one. Creates `dir`.
// Internal or the file system's error, naming the path.
absl::Status SaveCheckpoint(const std::string& dir, const CheckpointInfo& info,
                            torch::nn::Module& model,
                            torch::optim::Optimizer& optimizer);

// Loads the checkpoint in `dir` into `model` and `optimizer` and returns
// what it recorded; nullopt when there is none. A checkpoint of the trainer
// from before positions were recorded loads with `legacy` set. DataLoss when
// it cannot be read, does not fit the model, or comes from a newer format.
absl::StatusOr<std::optional<CheckpointInfo>> LoadCheckpoint(
    const std::string& dir, torch::nn::Module& model,
    torch::optim::Optimizer& optimizer);

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_CHECKPOINT_H_
