#include "tools/util/path_under.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace fleetplan {

std::string PathUnder(absl::string_view dir, absl::string_view relative) {
  while (dir.size() > 1 && absl::EndsWith(dir, "/")) dir.remove_suffix(1);
  relative = absl::StripPrefix(relative, "./");
  if (dir == "/") return absl::StrCat("/", relative);
  return absl::StrCat(dir, "/", relative);
}

}  // namespace fleetplan
