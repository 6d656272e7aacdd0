#include "tools/util/human_units.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fleetplan {

std::string FormatBytes(uint64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = bytes / 1024.0;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.1f %s", value, units[unit]);
}

std::string FormatElapsed(absl::Duration elapsed) {
  const double seconds = absl::ToDoubleSeconds(elapsed);
  if (seconds < 10) return absl::StrFormat("%.1fs", seconds < 0 ? 0.0 : seconds);
  const int64_t whole = static_cast<int64_t>(std::llround(seconds));
  if (whole < 60) return absl::StrCat(whole, "s");
  if (whole < 3600) return absl::StrCat(whole / 60, "m ", whole % 60, "s");
  return absl::StrCat(whole / 3600, "h ", whole % 3600 / 60, "m");
}

std::string FormatCount(int64_t count) {
  std::string digits = absl::StrCat(count < 0 ? -count : count);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return count < 0 ? "-" + out : out;
}

}  // namespace fleetplan
