#include "trainer/data_parallel.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/csrc/utils/tensor_flatten.h>

#include <exception>
#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "tools/util/digest.h"
#include "tools/util/status_macros.h"

namespace fleetplan::trainer {
namespace {

// DDP's small first bucket: its all-reduce starts as early as possible.
constexpr int64_t kFirstBucketBytes = 1 << 20;

absl::Status CollectiveError(const char* what, const std::exception& e) {
  return absl::InternalError(absl::StrCat(what, " failed: ", e.what()));
}

// Runs after a parameter's AccumulateGrad has added this step's gradient
// into .grad (a slice of the parameter's bucket).
class GradientReady : public torch::autograd::FunctionPostHook {
 public:
  explicit GradientReady(std::function<void()> ready) : ready_(std::move(ready)) {}
  torch::autograd::variable_list operator()(
      const torch::autograd::variable_list& outputs,
      const torch::autograd::variable_list& /*inputs*/) override {
    ready_();
    return outputs;
  }

 private:
  std::function<void()> ready_;
};

std::vector<at::Tensor> Detached(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> result;
  for (const at::Tensor& t : tensors) result.push_back(t.detach());
  return result;
}

}  // namespace

absl::Status BroadcastFromRankZero(c10d::ProcessGroup& group,
                                   std::vector<at::Tensor> tensors) {
  // One flat broadcast per dtype (BatchNorm mixes float and int64 buffers).
  std::map<at::ScalarType, std::vector<at::Tensor>> by_type;
  for (const at::Tensor& t : tensors) by_type[t.scalar_type()].push_back(t);
  try {
    torch::NoGradGuard no_grad;
    for (auto& [type, group_tensors] : by_type) {
      std::vector<at::Tensor> flat = {
          torch::utils::flatten_dense_tensors(group_tensors)};
      group.broadcast(flat)->wait();
      std::vector<at::Tensor> unflat =
          torch::utils::unflatten_dense_tensors(flat[0], group_tensors);
      for (size_t i = 0; i < group_tensors.size(); ++i) {
        group_tensors[i].copy_(unflat[i]);
      }
    }
  } catch (const std::exception& e) {
    return CollectiveError("broadcast from rank 0", e);
  }
  return absl::OkStatus();
}

absl::Status AllReduceSum(c10d::ProcessGroup& group,
                          std::vector<double>& values) {
  try {
    std::vector<at::Tensor> tensor = {
        torch::tensor(values, torch::kFloat64)};
    group.allreduce(tensor)->wait();
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = tensor[0][i].item<double>();
    }
  } catch (const std::exception& e) {
    return CollectiveError("all-reduce", e);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<DataParallel>> DataParallel::Create(
    c10::intrusive_ptr<c10d::ProcessGroup> group, torch::nn::Module& model,
    int64_t bucket_cap_bytes) {
  std::vector<at::Tensor> params = model.parameters();
  std::vector<at::Tensor> buffers = Detached(model.buffers());
  std::vector<at::Tensor> state = Detached(params);
  state.insert(state.end(), buffers.begin(), buffers.end());
  FP_RETURN_IF_ERROR(BroadcastFromRankZero(*group, state));
  std::unique_ptr<DataParallel> parallel(
      new DataParallel(std::move(group), std::move(params), std::move(buffers)));
  parallel->AssignBuckets(bucket_cap_bytes);
  parallel->PointGradientsIntoBuckets();
  parallel->RegisterHooks();
  return parallel;
}

void DataParallel::AssignBuckets(int64_t bucket_cap_bytes) {
  where_.resize(params_.size());
  int64_t bucket_bytes = 0;
  int64_t cap = kFirstBucketBytes;
  // Reverse order: the last layers' gradients come first in backward.
  for (size_t i = params_.size(); i-- > 0;) {
    const at::Tensor& p = params_[i];
    const int64_t bytes = p.numel() * p.element_size();
    if (buckets_.empty() || bucket_bytes >= cap ||
        buckets_.back().flat.scalar_type() != p.scalar_type()) {
      if (!buckets_.empty()) cap = bucket_cap_bytes;
      buckets_.emplace_back();
      buckets_.back().flat = at::empty({0}, p.options());
      bucket_bytes = 0;
    }
    Bucket& bucket = buckets_.back();
    where_[i] = {buckets_.size() - 1, bucket.params.size()};
    bucket.offsets.push_back(bucket.flat.numel());
    bucket.params.push_back(i);
    bucket.flat = at::empty({bucket.flat.numel() + p.numel()}, p.options());
    bucket_bytes += bytes;
  }
}

void DataParallel::PointGradientsIntoBuckets() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    auto [b, slot] = where_[i];
    Bucket& bucket = buckets_[b];
    at::Tensor& p = params_[i];
    // An alias of the bucket's bytes, not an autograd view, so that the
    // optimizer's zero_grad may detach and zero it in place.
    at::Tensor alias = at::empty({0}, bucket.flat.options());
    alias.set_(bucket.flat.storage(),
               bucket.flat.storage_offset() + bucket.offsets[slot],
               p.sizes(), p.strides());
    alias.zero_();
    p.mutable_grad() = alias;
  }
}

void DataParallel::RegisterHooks() {
  for (size_t i = 0; i < params_.size(); ++i) {
    std::shared_ptr<torch::autograd::Node> accumulator =
        torch::autograd::impl::grad_accumulator(params_[i]);
    accumulator->add_post_hook(
        std::make_unique<GradientReady>([this, i] { OnGradient(i); }));
    // The variable holds its accumulator weakly; keep the hooked one.
    accumulators_.push_back(std::move(accumulator));
  }
}

void DataParallel::OnGradient(size_t param) {
  Bucket& bucket = buckets_[where_[param].first];
  if (--bucket.pending == 0) {
    std::vector<at::Tensor> tensors = {bucket.flat};
    bucket.work = group_->allreduce(tensors);
  }
}

absl::Status DataParallel::BeforeForward() {
  for (Bucket& bucket : buckets_) {
    bucket.pending = bucket.params.size();
    bucket.work.reset();
  }
  return SyncBuffers();
}

absl::Status DataParallel::SyncBuffers() {
  return BroadcastFromRankZero(*group_, buffers_);
}

absl::Status DataParallel::AfterBackward() {
  const double world_size = group_->getSize();
  try {
    torch::NoGradGuard no_grad;
    for (Bucket& bucket : buckets_) {
      if (bucket.pending != 0 || !bucket.work) {
        return absl::InternalError(absl::StrCat(
            "parameter ", bucket.params[0],
            "'s bucket got no gradient this step: every parameter must take "
            "part in the loss"));
      }
      bucket.work->wait();
      // The parameters' .grad are slices of `flat`: the mean lands there.
      bucket.flat.div_(world_size);
    }
  } catch (const std::exception& e) {
    return CollectiveError("gradient all-reduce", e);
  }
  return absl::OkStatus();
}

std::string ParameterDigest(const torch::nn::Module& model) {
  Digester digester;
  auto add = [&](const std::string& name, const at::Tensor& tensor) {
    at::Tensor bytes = tensor.detach().contiguous();
    digester.Add(name);
    digester.AddBytes(bytes.data_ptr(), bytes.numel() * bytes.element_size());
  };
  for (const auto& item : model.named_parameters()) add(item.key(), item.value());
  return digester.Hex();
}

}  // namespace fleetplan::trainer
