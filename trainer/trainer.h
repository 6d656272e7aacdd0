#ifndef FLEETPLAN_TRAINER_TRAINER_H_
#define FLEETPLAN_TRAINER_TRAINER_H_

// The training loop: rendezvous, data, model, data-parallel SGD, periodic
// checkpoints, evaluation per epoch, metrics as JSON lines.

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "trainer/dist_env.h"

namespace fleetplan::trainer {

struct TrainerOptions {
  std::string backend = "gloo";           // "gloo" | "nccl"
  std::string dataset = "fashion-mnist";  // "fashion-mnist" | "synthetic"
  std::string data_dir;                   // empty: the Debian package's
  std::string arch = "cnn";               // "cnn" | "resnet18" | "resnet50"
  int image_size = 0;                     // 0: 28 for cnn, 64 for ResNets
  int64_t epochs = 2;
  int64_t batch_size = 64;  // per rank
  // Per-rank learning rate; SGD peaks at lr * world_size (the linear
  // scaling rule: the global batch grows with the world size) after a
  // warm-up, then decays along a cosine (lr_schedule.h).
  double lr = 0.03;
  double momentum = 0.9;
  uint64_t seed = 0;
  int64_t steps_per_epoch = 100;  // synthetic data only
  int64_t log_every = 100;
  int64_t checkpoint_every = 0;  // 0: never
  // Rank 0's (on the chief): the only rank that writes or reads it.
  std::string checkpoint_dir;
  // From rank 0's checkpoint, at any world size (rank_zero_resume.h).
  bool resume = false;
  int threads = 1;
  absl::Duration rendezvous_timeout = absl::Seconds(60);
  bool param_digest = false;  // every rank logs a digest of its parameters
  int64_t bucket_cap_mb = 25;
};

// Trains as rank `env.rank` of `env.world_size`, writing JSON lines to
// `out` (rank 0; every rank when param_digest is set). Returns the first
// error: InvalidArgument for bad options, NotFound for missing data,
// DeadlineExceeded for a failed rendezvous, Internal for a failed step;
// FailedPrecondition or DataLoss for a checkpoint that cannot be resumed.
absl::Status RunTraining(const TrainerOptions& options, const DistEnv& env,
                         std::ostream& out);

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_TRAINER_H_
