#include "trainer/dataset.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tools/util/status_macros.h"
#include "trainer/idx_reader.h"
#include "trainer/sampler.h"

namespace fleetplan::trainer {
namespace {

// Fashion-MNIST's training-set mean and standard deviation.
constexpr float kMean = 0.2860f;
constexpr float kStd = 0.3530f;
constexpr int kSyntheticPoolBatches = 4;

absl::StatusOr<IdxArray> ReadPackagedFile(const std::string& path) {
  absl::StatusOr<IdxArray> array = ReadIdxFile(path);
  if (absl::IsNotFound(array.status())) {
    return absl::NotFoundError(absl::StrCat(
        "Fashion-MNIST file ", path,
        " not found: install the Debian package dataset-fashion-mnist "
        "(apt-get install dataset-fashion-mnist) or pass --data-dir"));
  }
  return array;
}

// The tensor takes the bytes over (no copy: the training set is 47 MB).
torch::Tensor ToTensor(IdxArray array) {
  auto* bytes = new std::vector<uint8_t>(std::move(array.data));
  return torch::from_blob(
      bytes->data(), array.dims,
      [bytes](void*) { delete bytes; }, torch::kUInt8);
}

class ShardedData : public TrainData {
 public:
  ShardedData(LabeledImages data, const ShardOptions& options)
      : data_(std::move(data)), options_(options) {}

  int64_t EpochLength() const override { return data_.images.size(0); }

  int64_t StepsLeft(int64_t start) const override {
    return trainer::StepsLeft(Split(start));
  }

  int64_t PositionAfter(int64_t start, int64_t steps) const override {
    return trainer::PositionAfter(Split(start), steps);
  }

  Batch GetBatch(int64_t epoch, int64_t start, int64_t step) override {
    if (epoch != cached_epoch_ || start != cached_start_) {
      std::vector<int64_t> shard = ShardIndices(
          Split(start), options_.rank, options_.seed, epoch);
      shard_ = torch::tensor(shard, torch::kInt64);
      cached_epoch_ = epoch;
      cached_start_ = start;
    }
    const int64_t begin = step * options_.batch_size;
    const int64_t end =
        std::min(begin + options_.batch_size, shard_.size(0));
    torch::Tensor indices = shard_.slice(0, begin, end);
    return {Normalize(data_.images.index_select(0, indices)),
            data_.labels.index_select(0, indices)};
  }

 private:
  EpochSplit Split(int64_t start) const {
    return {EpochLength(), start, options_.world_size, options_.batch_size};
  }

  LabeledImages data_;
  ShardOptions options_;
  int64_t cached_epoch_ = -1;
  int64_t cached_start_ = -1;
  torch::Tensor shard_;
};

class SyntheticData : public TrainData {
 public:
  explicit SyntheticData(const SyntheticOptions& options)
      : steps_per_epoch_(options.steps_per_epoch) {
    torch::Generator generator =
        at::detail::createCPUGenerator(options.seed);
    for (int i = 0; i < kSyntheticPoolBatches; ++i) {
      pool_.push_back(
          {torch::randn({options.batch_size, options.channels,
                         options.image_size, options.image_size},
                        generator),
           torch::randint(options.num_classes, {options.batch_size},
                          generator, torch::kInt64)});
    }
  }

  int64_t EpochLength() const override { return steps_per_epoch_; }

  int64_t StepsLeft(int64_t start) const override {
    return std::max<int64_t>(0, steps_per_epoch_ - start);
  }

  int64_t PositionAfter(int64_t start, int64_t steps) const override {
    return std::min(steps_per_epoch_, start + steps);
  }

  Batch GetBatch(int64_t epoch, int64_t start, int64_t step) override {
    return pool_[(epoch * steps_per_epoch_ + start + step) % pool_.size()];
  }

 private:
  int64_t steps_per_epoch_;
  std::vector<Batch> pool_;
};

}  // namespace

torch::Tensor Normalize(const torch::Tensor& pixels) {
  return pixels.to(torch::kFloat32).div_(255.0f).sub_(kMean).div_(kStd);
}

absl::StatusOr<LabeledImages> LoadFashionMnist(const std::string& dir,
                                               const std::string& split) {
  const std::string prefix = absl::StrCat(dir, "/", split);
  FP_ASSIGN_OR_RETURN(IdxArray images,
                      ReadPackagedFile(prefix + "-images-idx3-ubyte.gz"));
  FP_ASSIGN_OR_RETURN(IdxArray labels,
                      ReadPackagedFile(prefix + "-labels-idx1-ubyte.gz"));
  if (images.dims.size() != 3 || labels.dims.size() != 1 ||
      images.dims[0] != labels.dims[0]) {
    return absl::DataLossError(absl::StrCat(
        prefix, ": expected N images of HxW and N labels, got ",
        images.dims.size(), "-d images and ", labels.dims.size(),
        "-d labels of different counts"));
  }
  LabeledImages result;
  result.images = ToTensor(std::move(images)).unsqueeze(1);
  result.labels = ToTensor(std::move(labels)).to(torch::kInt64);
  return result;
}

std::unique_ptr<TrainData> MakeShardedData(LabeledImages data,
                                           const ShardOptions& options) {
  return std::make_unique<ShardedData>(std::move(data), options);
}

std::unique_ptr<TrainData> MakeSyntheticData(const SyntheticOptions& options) {
  return std::make_unique<SyntheticData>(options);
}

}  // namespace fleetplan::trainer
