#ifndef FLEETPLAN_TRAINER_DATASET_H_
#define FLEETPLAN_TRAINER_DATASET_H_

// Training and test data: Fashion-MNIST from the Debian package
// dataset-fashion-mnist, or synthetic images for throughput runs.

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fleetplan::trainer {

inline constexpr char kDefaultFashionMnistDir[] =
    "/usr/share/datasets/fashion-mnist";

struct Batch {
  torch::Tensor inputs;   // N x C x H x W, float
  torch::Tensor targets;  // N, int64 class indices
};

// Images with their labels, all in memory. The pixels stay bytes (a
// quarter of the memory of floats: 47 MB for the training set instead of
// 188 MB per rank) and are normalized a batch at a time by Normalize().
struct LabeledImages {
  torch::Tensor images;  // N x 1 x 28 x 28, uint8
  torch::Tensor labels;  // N, int64
};

// A batch of Fashion-MNIST pixels as the model takes them: float, scaled by
// the training set's mean and standard deviation.
torch::Tensor Normalize(const torch::Tensor& pixels);

// Reads split "train" or "t10k" of Fashion-MNIST from the gzipped IDX files
// in `dir`. NotFound (naming the Debian package) when the files are missing;
// DataLoss when they are malformed or disagree in length.
absl::StatusOr<LabeledImages> LoadFashionMnist(const std::string& dir,
                                               const std::string& split);

// The batches one rank trains on. An epoch's progress is its position, in
// units that do not depend on the world size (see each implementation), so
// a resumed run can continue mid-epoch with any number of ranks: a batch is
// addressed by (epoch, the position its part of the epoch started at, the
// step since).
class TrainData {
 public:
  virtual ~TrainData() = default;
  // The position at the end of an epoch.
  virtual int64_t EpochLength() const = 0;
  // Steps this rank takes from `start` to the end of an epoch.
  virtual int64_t StepsLeft(int64_t start) const = 0;
  // Where an epoch stands after all ranks took `steps` steps from `start`.
  virtual int64_t PositionAfter(int64_t start, int64_t steps) const = 0;
  // Batch `step` (0-based) after `start` in `epoch`, for this rank.
  virtual Batch GetBatch(int64_t epoch, int64_t start, int64_t step) = 0;

  // The steps of a whole epoch at this world size.
  int64_t StepsPerEpoch() const { return StepsLeft(0); }
};

struct ShardOptions {
  int rank = 0;
  int world_size = 1;
  int64_t batch_size = 64;  // per rank
  uint64_t seed = 0;
};

// Each rank's disjoint shard of `data`, reshuffled every epoch from the
// shared seed (see sampler.h); the last batch of an epoch may be short. The
// position is the number of samples of the epoch's order trained on, so the
// rest of an epoch is resharded among however many ranks resume it.
std::unique_ptr<TrainData> MakeShardedData(LabeledImages data,
                                           const ShardOptions& options);

struct SyntheticOptions {
  int64_t batch_size = 64;
  int64_t steps_per_epoch = 100;
  int channels = 3;
  int image_size = 64;
  int num_classes = 10;
  uint64_t seed = 0;  // with the rank mixed in by the caller
};

// Random images and labels from a small fixed pool of batches, generated
// once, so data loading costs nothing in throughput runs and every
// (epoch, step) gets the same batch again on resume. There is nothing to
// reshard: an epoch is steps_per_epoch steps at any world size, and the
// position is the number of steps taken.
std::unique_ptr<TrainData> MakeSyntheticData(const SyntheticOptions& options);

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_DATASET_H_
