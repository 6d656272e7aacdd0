#include "trainer/checkpoint.h"

#include <sys/stat.h>

#include <exception>
#include <map>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/process/files.h"
#include "tools/util/status_macros.h"

namespace fleetplan::trainer {
namespace {

// Absent in the trainer's first checkpoints, which held the step alone.
constexpr int64_t kFormat = 2;
constexpr char kFormatKey[] = "fleetplan_format";
constexpr char kStepKey[] = "fleetplan_step";
constexpr char kEpochKey[] = "fleetplan_epoch";
constexpr char kPositionKey[] = "fleetplan_position";
constexpr char kWorldSizeKey[] = "fleetplan_world_size";
constexpr char kBatchSizeKey[] = "fleetplan_batch_size";
constexpr char kSeedKey[] = "fleetplan_seed";
constexpr char kDatasetKey[] = "fleetplan_dataset";
constexpr char kModelKey[] = "model";
constexpr char kOptimizerKey[] = "optimizer";

void WriteInt(torch::serialize::OutputArchive& archive, const char* key,
              int64_t value) {
  archive.write(key, torch::tensor(value, torch::kInt64));
}

int64_t ReadInt(torch::serialize::InputArchive& archive, const char* key) {
  torch::Tensor value;
  archive.read(key, value);
  return value.item<int64_t>();
}

void WriteInfo(torch::serialize::OutputArchive& archive,
               const CheckpointInfo& info) {
  WriteInt(archive, kFormatKey, kFormat);
  WriteInt(archive, kStepKey, info.step);
  WriteInt(archive, kEpochKey, info.at.epoch);
  WriteInt(archive, kPositionKey, info.at.position);
  WriteInt(archive, kWorldSizeKey, info.world_size);
  WriteInt(archive, kBatchSizeKey, info.batch_size);
  WriteInt(archive, kSeedKey, static_cast<int64_t>(info.seed));
  archive.write(kDatasetKey, c10::IValue(info.dataset));
}

// The recorded position; for a legacy checkpoint only the step.
CheckpointInfo ReadInfo(torch::serialize::InputArchive& archive,
                        int64_t format) {
  CheckpointInfo info;
  info.step = ReadInt(archive, kStepKey);
  if (format == 0) {
    info.legacy = true;
    return info;
  }
  info.at.epoch = ReadInt(archive, kEpochKey);
  info.at.position = ReadInt(archive, kPositionKey);
  info.world_size = static_cast<int>(ReadInt(archive, kWorldSizeKey));
  info.batch_size = ReadInt(archive, kBatchSizeKey);
  info.seed = static_cast<uint64_t>(ReadInt(archive, kSeedKey));
  c10::IValue dataset;
  archive.read(kDatasetKey, dataset);
  info.dataset = dataset.toStringRef();
  return info;
}

// The shape of each parameter and buffer of `model`, by name.
std::map<std::string, std::vector<int64_t>> Shapes(
    const torch::nn::Module& model) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& item : model.named_parameters()) {
    shapes[item.key()] = item.value().sizes().vec();
  }
  for (const auto& item : model.named_buffers()) {
    shapes[item.key()] = item.value().sizes().vec();
  }
  return shapes;
}

// Loading puts the file's tensors in place whatever their shapes: a
// checkpoint of another model (another --image-size) must fail here, not
// in the first forward pass, or on the other ranks' broadcast.
absl::Status LoadModel(torch::serialize::InputArchive& archive,
                       torch::nn::Module& model, const std::string& path) {
  const auto before = Shapes(model);
  torch::serialize::InputArchive model_archive;
  archive.read(kModelKey, model_archive);
  model.load(model_archive);
  for (const auto& [name, shape] : Shapes(model)) {
    if (shape != before.at(name)) {
      return absl::DataLossError(absl::StrCat(
          "checkpoint ", path, " holds another model: its ", name, " is [",
          absl::StrJoin(shape, ", "), "], this model's [",
          absl::StrJoin(before.at(name), ", "), "]"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string CheckpointPath(const std::string& dir) {
  return absl::StrCat(dir, "/checkpoint.pt");
}

absl::Status SaveCheckpoint(const std::string& dir, const CheckpointInfo& info,
                            torch::nn::Module& model,
                            torch::optim::Optimizer& optimizer) {
  std::ostringstream bytes;
  try {
    torch::serialize::OutputArchive archive;
    torch::serialize::OutputArchive model_archive;
    model.save(model_archive);
    archive.write(kModelKey, model_archive);
    torch::serialize::OutputArchive optimizer_archive;
    optimizer.save(optimizer_archive);
    archive.write(kOptimizerKey, optimizer_archive);
    WriteInfo(archive, info);
    archive.save_to(bytes);
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("cannot serialize checkpoint at step ", info.step, ": ",
                     e.what()));
  }
  FP_RETURN_IF_ERROR(MakeDirs(dir));
  return WriteFileAtomic(CheckpointPath(dir), bytes.str(), 0644);
}

absl::StatusOr<std::optional<CheckpointInfo>> LoadCheckpoint(
    const std::string& dir, torch::nn::Module& model,
    torch::optim::Optimizer& optimizer) {
  const std::string path = CheckpointPath(dir);
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return std::optional<CheckpointInfo>();
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    torch::Tensor format;
    const int64_t version =
        archive.try_read(kFormatKey, format) ? format.item<int64_t>() : 0;
    if (version > kFormat) {
      return absl::DataLossError(absl::StrCat(
          "checkpoint ", path, " has format ", version,
          ", written by a newer trainer; this one reads formats up to ",
          kFormat));
    }
    FP_RETURN_IF_ERROR(LoadModel(archive, model, path));
    torch::serialize::InputArchive optimizer_archive;
    archive.read(kOptimizerKey, optimizer_archive);
    optimizer.load(optimizer_archive);
    return std::optional<CheckpointInfo>(ReadInfo(archive, version));
  } catch (const std::exception& e) {
    return absl::DataLossError(
        absl::StrCat("cannot load checkpoint ", path, ": ", e.what()));
  }
}

}  // namespace fleetplan::trainer
