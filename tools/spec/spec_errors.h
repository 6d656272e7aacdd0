#ifndef FLEETPLAN_TOOLS_SPEC_SPEC_ERRORS_H_
#define FLEETPLAN_TOOLS_SPEC_SPEC_ERRORS_H_

// Collects every error of one spec file, so a user fixes them all in one
// round, and renders each ninja-style: location, message, the line itself and
// a caret under the column. A long line is cut to kSourceWidth characters
// around the column, "..." marking each cut side; control characters are
// never written out raw (escaped in messages, "?" in the quoted line).

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

class SpecErrors {
 public:
  // The most characters of a source line an error quotes.
  static constexpr int kSourceWidth = 100;

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
  // The source line, cut around `column`, and the caret under it.
  std::string QuotedLine(int line, int column) const;

  absl::string_view text_;
  std::string path_;
  std::vector<std::string> errors_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SPEC_SPEC_ERRORS_H_
