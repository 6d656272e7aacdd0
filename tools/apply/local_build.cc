#include "tools/apply/local_build.h"

#include <signal.h>

#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "tools/process/files.h"
#include "tools/process/subprocess.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

// "//pkg/sub:name" → "pkg/sub/name"; "//pkg" → "pkg/pkg".
std::string LabelOutputPath(absl::string_view label) {
  label = absl::StripPrefix(label, "//");
  size_t colon = label.find(':');
  if (colon != absl::string_view::npos) {
    return absl::StrCat(label.substr(0, colon), "/", label.substr(colon + 1));
  }
  size_t slash = label.rfind('/');
  return absl::StrCat(label, "/",
                      slash == absl::string_view::npos ? label : label.substr(slash + 1));
}

}  // namespace

absl::StatusOr<int> RunLocalCommand(const std::string& command,
                                    const std::string& cwd,
                                    const OutputCallback& on_output,
                                    const absl::Notification* cancel) {
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", command};
  options.cwd = cwd;
  FP_ASSIGN_OR_RETURN(std::unique_ptr<Subprocess> child, Subprocess::Start(options));
  Subprocess* processes[] = {child.get()};
  auto forward = [&](size_t, absl::string_view chunk) {
    if (on_output) on_output(chunk);
  };
  while (true) {
    if (cancel != nullptr && cancel->HasBeenNotified()) {
      StopAll(processes, absl::Seconds(5), forward);
      break;
    }
    PumpOutput(processes, {}, absl::Milliseconds(100), forward);
    // Reaping also kills what the command left in its group, which closes
    // the pipe; then drain what is left.
    if (child->TryWait().has_value() && !child->output_open()) break;
  }
  return child->TryWait().value_or(128 + SIGKILL);
}

absl::StatusOr<std::string> BuiltBinaryPath(const std::string& workspace,
                                            const std::string& label) {
  std::string bin_dir = absl::StrCat(workspace, "/bazel-bin");
  std::string info;
  absl::StatusOr<int> status = RunLocalCommand(
      "bazel info bazel-bin 2>/dev/null", workspace,
      [&](absl::string_view chunk) { absl::StrAppend(&info, chunk); }, nullptr);
  std::string trimmed(absl::StripAsciiWhitespace(info));
  if (status.ok() && *status == 0 && absl::StartsWith(trimmed, "/") &&
      trimmed.find('\n') == std::string::npos) {
    bin_dir = trimmed;
  }
  std::string path = absl::StrCat(bin_dir, "/", LabelOutputPath(label));
  if (!IsRegularFile(path)) {
    return absl::NotFoundError(
        absl::StrCat("the build of ", label, " left no file at ", path));
  }
  return path;
}

}  // namespace fleetplan
