#ifndef FLEETPLAN_TOOLS_AGENT_LINE_PREFIXER_H_
#define FLEETPLAN_TOOLS_AGENT_LINE_PREFIXER_H_

// Turns a rank's output, which arrives in chunks cut anywhere, into whole
// lines that each start with the rank's prefix, so lines of different ranks
// never mix on the agent's stdout.

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace fleetplan {

class LinePrefixer {
 public:
  // A line longer than `max_line` is cut there, so one rank that never
  // writes a newline cannot hold back (or exhaust) memory.
  explicit LinePrefixer(std::string prefix, size_t max_line = 64 * 1024)
      : prefix_(std::move(prefix)), max_line_(max_line) {}

  // Appends `chunk`; returns the lines it completed, prefixed, each ending
  // in '\n' (empty when none did).
  std::string Feed(absl::string_view chunk);

  // The unterminated rest, prefixed and given a '\n'; empty when none.
  std::string Flush();

 private:
  std::string prefix_;
  size_t max_line_;
  std::string partial_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_LINE_PREFIXER_H_
