#include "tools/protocol/step_pattern.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "re2/re2.h"
#include "tools/protocol/metric_line.h"

namespace fleetplan {
namespace {

// RE2's options for a progress pattern: errors are returned, not logged.
RE2::Options PatternOptions() {
  RE2::Options options;
  options.set_log_errors(false);
  return options;
}

}  // namespace

std::string ProgressPatternError(const std::string& regex) {
  RE2 compiled(regex, PatternOptions());
  if (!compiled.ok()) return compiled.error();
  if (compiled.NumberOfCapturingGroups() < 1) {
    return "it has no capturing group around the step (expected e.g. \"step (\\\\d+)\")";
  }
  return "";
}

absl::StatusOr<StepPattern> StepPattern::Make(const std::string& regex) {
  StepPattern pattern;
  if (regex.empty()) return pattern;
  if (std::string error = ProgressPatternError(regex); !error.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("progress pattern \"", regex, "\": ", error));
  }
  pattern.regex_ = std::make_shared<const RE2>(regex, PatternOptions());
  return pattern;
}

std::optional<int64_t> StepPattern::StepOf(absl::string_view line) const {
  if (std::optional<int64_t> step = MetricLineStep(line)) return step;
  if (regex_ == nullptr) return std::nullopt;
  re2::StringPiece group;
  if (!RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), *regex_, &group)) {
    return std::nullopt;
  }
  int64_t step;
  if (!absl::SimpleAtoi(absl::string_view(group.data(), group.size()), &step)) {
    return std::nullopt;
  }
  return step;
}

}  // namespace fleetplan
