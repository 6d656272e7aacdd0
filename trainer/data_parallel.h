#ifndef FLEETPLAN_TRAINER_DATA_PARALLEL_H_
#define FLEETPLAN_TRAINER_DATA_PARALLEL_H_

// Data parallelism on a c10d process group, the way DDP does it: parameters
// start equal (broadcast from rank 0); gradients are packed into buckets
// (about 25 MB, in reverse parameter order, the order backward produces
// them; each parameter's .grad is a slice of its bucket) and each bucket's
// all-reduce starts from an autograd hook as soon as its last gradient has
// been accumulated, overlapping communication with the rest of
// backward. (Debian's libtorch-dev lacks headers that c10d's reducer.hpp
// includes, so c10d::Reducer cannot be used from C++ here.)

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fleetplan::trainer {

class DataParallel {
 public:
  // Broadcasts `model`'s parameters and buffers from rank 0 and hooks its
  // parameters. Internal when a collective fails. `model` must outlive this.
  static absl::StatusOr<std::unique_ptr<DataParallel>> Create(
      c10::intrusive_ptr<c10d::ProcessGroup> group, torch::nn::Module& model,
      int64_t bucket_cap_bytes = 25 << 20);

  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  // Call before each training forward pass: broadcasts buffers (BatchNorm
  // statistics) from rank 0, as DDP does, and arms the buckets.
  absl::Status BeforeForward();

  // Broadcasts buffers from rank 0 (also before evaluation, so every rank
  // evaluates the same model).
  absl::Status SyncBuffers();

  // Call after backward, before the optimizer step: waits for the bucket
  // all-reduces and sets every parameter's .grad to the mean over ranks.
  // Internal when a collective failed or a parameter got no gradient.
  absl::Status AfterBackward();

 private:
  struct Bucket {
    std::vector<size_t> params;   // indices into params_
    std::vector<int64_t> offsets;  // of each param in `flat`
    at::Tensor flat;
    size_t pending = 0;  // gradients still to arrive this step
    c10::intrusive_ptr<c10d::Work> work;
  };

  DataParallel(c10::intrusive_ptr<c10d::ProcessGroup> group,
               std::vector<at::Tensor> params, std::vector<at::Tensor> buffers)
      : group_(std::move(group)),
        params_(std::move(params)),
        buffers_(std::move(buffers)) {}

  void AssignBuckets(int64_t bucket_cap_bytes);
  // Makes every parameter's .grad a slice of its bucket (DDP's
  // gradient_as_bucket_view): backward accumulates straight into the
  // buckets and the all-reduced mean is the gradient, with no copy either
  // way.
  void PointGradientsIntoBuckets();
  void RegisterHooks();
  // After param's gradient was accumulated: launches its bucket's
  // all-reduce once the bucket is complete.
  void OnGradient(size_t param);

  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  std::vector<at::Tensor> params_;
  std::vector<at::Tensor> buffers_;
  std::vector<Bucket> buckets_;
  std::vector<std::pair<size_t, size_t>> where_;  // param -> (bucket, slot)
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
};

// Overwrites `tensors` on every rank with rank 0's values, in one flat
// broadcast per dtype. Internal when the collective fails.
absl::Status BroadcastFromRankZero(c10d::ProcessGroup& group,
                                   std::vector<at::Tensor> tensors);

// Sums `values` over all ranks in place.
absl::Status AllReduceSum(c10d::ProcessGroup& group,
                          std::vector<double>& values);

// A digest of the bytes of every parameter of `model`, in registration
// order: equal digests mean bit-identical parameters. (Buffers are left out:
// each rank's forward pass updates BatchNorm statistics from its own batch,
// as in DDP, until the next broadcast.)
std::string ParameterDigest(const torch::nn::Module& model);

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_DATA_PARALLEL_H_
