#ifndef FLEETPLAN_TRAINER_CHECKPOINT_H_
#define FLEETPLAN_TRAINER_CHECKPOINT_H_

// Checkpoints: model and optimizer state plus the global step, which fixes
// the position in the data order (epoch = step / steps per epoch).

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fleetplan::trainer {

// The one checkpoint file in `dir` (each save replaces it).
std::string CheckpointPath(const std::string& dir);

// Writes `model`, `optimizer` and `step` to a temporary file in `dir` and
// renames it over the checkpoint, so a reader (or a resume after a crash)
// sees the old checkpoint or the new one, never half of one. Creates `dir`.
// Internal or the file system's error, naming the path.
absl::Status SaveCheckpoint(const std::string& dir, int64_t step,
                            torch::nn::Module& model,
                            torch::optim::Optimizer& optimizer);

// Loads the checkpoint in `dir` into `model` and `optimizer` and returns its
// step; nullopt when there is none. DataLoss when it cannot be read or does
// not fit the model.
absl::StatusOr<std::optional<int64_t>> LoadCheckpoint(
    const std::string& dir, torch::nn::Module& model,
    torch::optim::Optimizer& optimizer);

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_CHECKPOINT_H_
