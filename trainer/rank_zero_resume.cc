#include "trainer/rank_zero_resume.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/util/status_macros.h"
#include "trainer/data_parallel.h"

namespace fleetplan::trainer {
namespace {

// What rank 0 broadcasts first: the outcome, the resume point, then one
// flag per parameter that has a momentum buffer.
enum HeaderField : int64_t {
  kOutcome,
  kEpoch,
  kPosition,
  kCheckpointStep,
  kCheckpointWorldSize,
  kHeaderFields
};
enum Outcome : int64_t { kNoCheckpoint, kResumed, kFailed };

std::vector<at::Tensor> Parameters(const torch::optim::SGD& optimizer) {
  std::vector<at::Tensor> params;
  for (const auto& group : optimizer.param_groups()) {
    params.insert(params.end(), group.params().begin(), group.params().end());
  }
  return params;
}

// The optimizer's state key for `param`, as torch::optim uses it.
std::string StateKey(const at::Tensor& param) {
  return c10::guts::to_string(param.unsafeGetTensorImpl());
}

// The momentum buffer of `param`; undefined when it has none yet.
at::Tensor MomentumBuffer(torch::optim::SGD& optimizer,
                          const at::Tensor& param) {
  auto it = optimizer.state().find(StateKey(param));
  if (it == optimizer.state().end()) return at::Tensor();
  return static_cast<torch::optim::SGDParamState&>(*it->second)
      .momentum_buffer();
}

absl::StatusOr<std::optional<ResumePoint>> LoadAndCheck(
    const ResumeRun& run, const TrainData& data, torch::nn::Module& model,
    torch::optim::SGD& optimizer) {
  FP_ASSIGN_OR_RETURN(std::optional<CheckpointInfo> info,
                      LoadCheckpoint(run.checkpoint_dir, model, optimizer));
  if (!info) return std::optional<ResumePoint>();
  FP_ASSIGN_OR_RETURN(ResumePoint point, ResumePointOf(*info, run, data));
  return std::optional<ResumePoint>(point);
}

std::vector<int64_t> Header(
    const absl::StatusOr<std::optional<ResumePoint>>& loaded,
    torch::optim::SGD& optimizer, const std::vector<at::Tensor>& params) {
  std::vector<int64_t> header(kHeaderFields + params.size(), 0);
  if (!loaded.ok()) {
    header[kOutcome] = kFailed;
    return header;
  }
  if (!loaded->has_value()) return header;
  const ResumePoint& point = **loaded;
  header[kOutcome] = kResumed;
  header[kEpoch] = point.start.epoch;
  header[kPosition] = point.start.position;
  header[kCheckpointStep] = point.checkpoint_step;
  header[kCheckpointWorldSize] = point.checkpoint_world_size;
  for (size_t i = 0; i < params.size(); ++i) {
    header[kHeaderFields + i] =
        MomentumBuffer(optimizer, params[i]).defined() ? 1 : 0;
  }
  return header;
}

// Gives every rank rank 0's momentum buffers: the others make zeroed ones
// where rank 0 has one, and all of them are broadcast.
absl::Status BroadcastMomentum(c10d::ProcessGroup& group,
                               const std::vector<int64_t>& header,
                               torch::optim::SGD& optimizer,
                               const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> buffers;
  for (size_t i = 0; i < params.size(); ++i) {
    if (header[kHeaderFields + i] == 0) continue;
    at::Tensor buffer = MomentumBuffer(optimizer, params[i]);
    if (!buffer.defined()) {
      auto state = std::make_unique<torch::optim::SGDParamState>();
      state->momentum_buffer(torch::zeros_like(params[i].detach()));
      buffer = state->momentum_buffer();
      optimizer.state()[StateKey(params[i])] = std::move(state);
    }
    buffers.push_back(buffer);
  }
  if (buffers.empty()) return absl::OkStatus();
  return BroadcastFromRankZero(group, std::move(buffers));
}

}  // namespace

absl::StatusOr<ResumePoint> ResumePointOf(const CheckpointInfo& saved,
                                          const ResumeRun& run,
                                          const TrainData& data) {
  const std::string path = CheckpointPath(run.checkpoint_dir);
  CheckpointInfo info = saved;
  if (info.legacy) {
    const int64_t per_epoch = data.StepsPerEpoch();
    info.at = {info.step / per_epoch,
               data.PositionAfter(0, info.step % per_epoch)};
    info.world_size = run.world_size;
    info.batch_size = run.batch_size;
    info.dataset = run.dataset;
    info.seed = run.seed;
  }
  if (info.dataset != run.dataset) {
    return absl::FailedPreconditionError(absl::StrCat(
        "checkpoint ", path, " was written training on --dataset=",
        info.dataset, ", not ", run.dataset));
  }
  if (info.seed != run.seed) {
    return absl::FailedPreconditionError(absl::StrCat(
        "checkpoint ", path, " was written with --seed=", info.seed,
        ", which fixes the data order it stopped in; this run has --seed=",
        run.seed));
  }
  const int64_t length = data.EpochLength();
  if (info.at.epoch < 0 || info.at.position < 0 ||
      info.at.position > length) {
    return absl::DataLossError(absl::StrCat(
        "checkpoint ", path, " stopped at position ", info.at.position,
        " of epoch ", info.at.epoch, ", which this run's data (epochs of ",
        length, ") does not have"));
  }
  ResumePoint point;
  point.start = info.at;
  if (point.start.position == length) point.start = {info.at.epoch + 1, 0};
  point.checkpoint_step = info.step;
  point.checkpoint_world_size = info.world_size;
  return point;
}

absl::StatusOr<std::optional<ResumePoint>> ResumeFromRankZero(
    const ResumeRun& run, c10d::ProcessGroup* group, const TrainData& data,
    torch::nn::Module& model, torch::optim::SGD& optimizer) {
  if (group == nullptr) return LoadAndCheck(run, data, model, optimizer);
  absl::StatusOr<std::optional<ResumePoint>> loaded =
      std::optional<ResumePoint>();
  if (run.rank == 0) loaded = LoadAndCheck(run, data, model, optimizer);
  const std::vector<at::Tensor> params = Parameters(optimizer);
  // Every rank takes part in the broadcast, even when rank 0 failed, so no
  // rank waits for one that has given up.
  at::Tensor sent =
      torch::tensor(Header(loaded, optimizer, params), torch::kInt64);
  FP_RETURN_IF_ERROR(BroadcastFromRankZero(*group, {sent}));
  if (!loaded.ok()) return loaded.status();
  const std::vector<int64_t> header(sent.data_ptr<int64_t>(),
                                    sent.data_ptr<int64_t>() + sent.numel());
  switch (header[kOutcome]) {
    case kNoCheckpoint:
      return std::optional<ResumePoint>();
    case kFailed:
      return absl::FailedPreconditionError(absl::StrCat(
          "rank ", run.rank, ": rank 0 could not resume from its checkpoint "
          "in ", run.checkpoint_dir, " (its error says why)"));
    default:
      break;
  }
  ResumePoint point;
  point.start = {header[kEpoch], header[kPosition]};
  point.checkpoint_step = header[kCheckpointStep];
  point.checkpoint_world_size = static_cast<int>(header[kCheckpointWorldSize]);
  FP_RETURN_IF_ERROR(BroadcastMomentum(*group, header, optimizer, params));
  return std::optional<ResumePoint>(point);
}

}  // namespace fleetplan::trainer
