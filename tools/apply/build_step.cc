#include "tools/apply/build_step.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tools/apply/local_build.h"
#include "tools/process/files.h"
#include "tools/plan/node_scripts.h"
#include "tools/protocol/node_layout.h"
#include "tools/util/digest.h"

namespace fleetplan {
namespace {

// The digest of the binary `label` builds, "" when there is none yet.
std::string BuiltDigest(const std::string& workspace, const std::string& label) {
  absl::StatusOr<std::string> path = BuiltBinaryPath(workspace, label);
  if (!path.ok()) return "";
  absl::StatusOr<std::string> content = ReadFileToString(*path);
  return content.ok() ? DigestHex(*content) : "";
}

// "//trainer:train" -> "bazel-bin/trainer/train".
std::string ShortBuiltPath(absl::string_view label) {
  absl::ConsumePrefix(&label, "//");
  size_t colon = label.find(':');
  if (colon == absl::string_view::npos) return absl::StrCat("bazel-bin/", label);
  return absl::StrCat("bazel-bin/", label.substr(0, colon), "/", label.substr(colon + 1));
}

}  // namespace

StepOutcome BuildStep::Run(const Step& step) {
  std::string label;
  for (const auto& [key, value] : step.inputs) {
    if (key == "targets") label = value;
  }
  const std::string& workspace = context_.options.workspace;
  std::string before = BuiltDigest(workspace, label);
  std::string output;
  StepOutcome outcome = RunStepCommand(context_, step, step.command, &output);
  if (outcome.status == StepStatus::kFailed) return outcome;
  absl::StatusOr<std::string> path = BuiltBinaryPath(workspace, label);
  if (!path.ok()) return StepOutcome::Failed(absl::StrCat("build: ", path.status().message()));
  absl::StatusOr<std::string> content = ReadFileToString(*path);
  if (!content.ok()) {
    return StepOutcome::Failed(absl::StrCat("build: ", content.status().message()));
  }
  if (DigestHex(*content) == before) outcome.status = StepStatus::kUnchanged;
  // The label and where the workspace shows it, not Bazel's cache path.
  outcome.detail = absl::StrCat(label, " (", ShortBuiltPath(label), ")");
  absl::MutexLock lock(&mu_);
  built_.push_back({*path, BinRelativePath(LabelTargetName(label))});
  return outcome;
}

std::vector<ExtraFile> BuildStep::built() const {
  absl::MutexLock lock(&mu_);
  return built_;
}

void BuildStep::Reset() {
  absl::MutexLock lock(&mu_);
  built_.clear();
}

}  // namespace fleetplan
