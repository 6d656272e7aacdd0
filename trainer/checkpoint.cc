#include "trainer/checkpoint.h"

#include <sys/stat.h>

#include <exception>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "tools/process/files.h"
#include "tools/util/status_macros.h"

namespace fleetplan::trainer {
namespace {

constexpr char kStepKey[] = "fleetplan_step";
constexpr char kModelKey[] = "model";
constexpr char kOptimizerKey[] = "optimizer";

}  // namespace

std::string CheckpointPath(const std::string& dir) {
  return absl::StrCat(dir, "/checkpoint.pt");
}

absl::Status SaveCheckpoint(const std::string& dir, int64_t step,
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
    archive.write(kStepKey, torch::tensor(step, torch::kInt64));
    archive.save_to(bytes);
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("cannot serialize checkpoint at step ", step, ": ",
                     e.what()));
  }
  FP_RETURN_IF_ERROR(MakeDirs(dir));
  return WriteFileAtomic(CheckpointPath(dir), bytes.str(), 0644);
}

absl::StatusOr<std::optional<int64_t>> LoadCheckpoint(
    const std::string& dir, torch::nn::Module& model,
    torch::optim::Optimizer& optimizer) {
  const std::string path = CheckpointPath(dir);
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return std::optional<int64_t>();
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    torch::serialize::InputArchive model_archive;
    archive.read(kModelKey, model_archive);
    model.load(model_archive);
    torch::serialize::InputArchive optimizer_archive;
    archive.read(kOptimizerKey, optimizer_archive);
    optimizer.load(optimizer_archive);
    torch::Tensor step;
    archive.read(kStepKey, step);
    return std::optional<int64_t>(step.item<int64_t>());
  } catch (const std::exception& e) {
    return absl::DataLossError(
        absl::StrCat("cannot load checkpoint ", path, ": ", e.what()));
  }
}

}  // namespace fleetplan::trainer
