#include "plugins/ssh/remote_paths.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fleetplan {

std::vector<std::string> ParentDirs(const std::vector<std::string>& paths) {
  // A parent is a prefix of its children, so it sorts first.
  std::set<std::string> dirs;
  for (const std::string& path : paths) {
    for (size_t slash = path.find('/', 1); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      if (slash > 0 && path[slash - 1] != '/') dirs.insert(path.substr(0, slash));
    }
  }
  return {dirs.begin(), dirs.end()};
}

}  // namespace fleetplan
