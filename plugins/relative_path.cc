#include "plugins/relative_path.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fleetplan {

absl::Status CheckStaysUnderRoot(absl::string_view root, absl::string_view path) {
  if (path.empty() || path[0] == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("path \"", path, "\" must be relative to ", root));
  }
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat("path \"", path, "\" climbs out of ", root, " through \"..\""));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> JoinUnderRoot(absl::string_view root, absl::string_view path) {
  absl::Status check = CheckStaysUnderRoot(root, path);
  if (!check.ok()) return check;
  if (root.empty() || absl::EndsWith(root, "/")) return absl::StrCat(root, path);
  return absl::StrCat(root, "/", path);
}

}  // namespace fleetplan
