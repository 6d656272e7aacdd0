#ifndef FLEETPLAN_TOOLS_APPLY_OUTPUT_BUFFER_H_
#define FLEETPLAN_TOOLS_APPLY_OUTPUT_BUFFER_H_

// Splits a command's output chunks into lines and keeps the last few, so a
// failure can show the tail of what the command printed.

#include <cstddef>
#include <deque>
#include <functional>
#include <string>

#include "absl/strings/string_view.h"

namespace fleetplan {

class OutputBuffer {
 public:
  // `on_line` (may be empty) gets each complete line without its newline.
  explicit OutputBuffer(size_t keep_lines = 20,
                        std::function<void(absl::string_view)> on_line = {})
      : keep_lines_(keep_lines), on_line_(std::move(on_line)) {}

  void Append(absl::string_view chunk);
  // Passes on a last line that had no newline.
  void Flush();

  // The last `keep_lines` lines, joined with newlines.
  std::string Tail() const;
  // Everything seen so far (capped at 1 MiB; for short outputs like a key).
  const std::string& all() const { return all_; }

 private:
  void Line(absl::string_view line);

  size_t keep_lines_;
  std::function<void(absl::string_view)> on_line_;
  std::string partial_;
  std::deque<std::string> tail_;
  std::string all_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_OUTPUT_BUFFER_H_
