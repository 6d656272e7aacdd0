#include "tools/agent/line_prefixer.h"

#include "absl/strings/str_cat.h"

namespace fleetplan {

std::string LinePrefixer::Feed(absl::string_view chunk) {
  std::string lines;
  while (!chunk.empty()) {
    size_t newline = chunk.find('\n');
    size_t room = max_line_ > partial_.size() ? max_line_ - partial_.size() : 0;
    if (newline != absl::string_view::npos && newline <= room) {
      absl::StrAppend(&lines, prefix_, partial_, chunk.substr(0, newline + 1));
      partial_.clear();
      chunk.remove_prefix(newline + 1);
    } else if (chunk.size() < room) {
      absl::StrAppend(&partial_, chunk);
      break;
    } else {
      absl::StrAppend(&lines, prefix_, partial_, chunk.substr(0, room), "\n");
      partial_.clear();
      chunk.remove_prefix(room);
    }
  }
  return lines;
}

std::string LinePrefixer::Flush() {
  if (partial_.empty()) return "";
  std::string line = absl::StrCat(prefix_, partial_, "\n");
  partial_.clear();
  return line;
}

}  // namespace fleetplan
