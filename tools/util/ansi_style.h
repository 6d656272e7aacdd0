#ifndef FLEETPLAN_TOOLS_UTIL_ANSI_STYLE_H_
#define FLEETPLAN_TOOLS_UTIL_ANSI_STYLE_H_

// Terminal colours for plan, apply's progress and the preflight table,
// written only when the caller decided colour is on (UseColor, flags.h).

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace fleetplan::ansi {

inline constexpr absl::string_view kRed = "\x1b[31m";
inline constexpr absl::string_view kGreen = "\x1b[32m";
inline constexpr absl::string_view kYellow = "\x1b[33m";
inline constexpr absl::string_view kCyan = "\x1b[36m";
inline constexpr absl::string_view kBold = "\x1b[1m";
inline constexpr absl::string_view kDim = "\x1b[2m";
inline constexpr absl::string_view kReset = "\x1b[0m";

// `text` in `style` when `color`, else as it is.
inline std::string Styled(bool color, absl::string_view style, absl::string_view text) {
  if (!color) return std::string(text);
  return absl::StrCat(style, text, kReset);
}

}  // namespace fleetplan::ansi

#endif  // FLEETPLAN_TOOLS_UTIL_ANSI_STYLE_H_
