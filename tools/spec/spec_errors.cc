#include "tools/spec/spec_errors.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace fleetplan {

SpecErrors::SpecErrors(absl::string_view text, std::string path)
    : text_(text), path_(std::move(path)) {}

void SpecErrors::Add(int line, int column, absl::string_view key,
                     absl::string_view message) {
  std::string error = absl::StrCat(path_, ":", line, ":", column, ": error: ");
  if (!key.empty()) absl::StrAppend(&error, key, ": ");
  absl::StrAppend(&error, message);
  std::string source = SourceLine(line);
  if (!source.empty()) {
    absl::StrAppend(&error, "\n  ", source, "\n  ",
                    std::string(column > 1 ? column - 1 : 0, ' '), "^");
  }
  errors_.push_back(std::move(error));
}

absl::Status SpecErrors::ToStatus() const {
  if (errors_.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(errors_, "\n"));
}

std::string SpecErrors::SourceLine(int line) const {
  if (line <= 0) return "";
  int current = 1;
  for (absl::string_view candidate : absl::StrSplit(text_, '\n')) {
    if (current++ != line) continue;
    if (!candidate.empty() && candidate.back() == '\r') candidate.remove_suffix(1);
    // Tabs would shift the caret; show them as single spaces.
    std::string shown(candidate);
    for (char& c : shown) {
      if (c == '\t') c = ' ';
    }
    return shown;
  }
  return "";
}

}  // namespace fleetplan
