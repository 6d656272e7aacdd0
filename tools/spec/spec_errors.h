#ifndef FLEETPLAN_TOOLS_SPEC_SPEC_ERRORS_H_
#define FLEETPLAN_TOOLS_SPEC_SPEC_ERRORS_H_

// Collects every error of one spec file, so a user fixes them all in one
// round, and renders each ninja-style: location, message, the line itself and
// a caret under the column.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

class SpecErrors {
 public:
  // `text` must outlive this object; `path` names the file in messages.
  SpecErrors(absl::string_view text, std::string path);

  // Records "path:line:col: error: key: message". `key` may be empty (for
  // TOML syntax errors). `line`/`column` are 1-based; 0 means unknown.
  void Add(int line, int column, absl::string_view key, absl::string_view message);

  bool empty() const { return errors_.empty(); }

  // OK when nothing was recorded, else InvalidArgument with every error in
  // the order found, blocks separated by newlines.
  absl::Status ToStatus() const;

 private:
  std::string SourceLine(int line) const;

  absl::string_view text_;
  std::string path_;
  std::vector<std::string> errors_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SPEC_SPEC_ERRORS_H_
