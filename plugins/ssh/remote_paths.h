#ifndef FLEETPLAN_PLUGINS_SSH_REMOTE_PATHS_H_
#define FLEETPLAN_PLUGINS_SSH_REMOTE_PATHS_H_

// Path arithmetic for files on a node, done on this machine so uploads need
// no round trips to plan their directories.

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fleetplan {

// Every directory that must exist for `paths` to be created, parents
// before children, each once: "/a/b/f", "/a/c/g" → "/a", "/a/b", "/a/c".
std::vector<std::string> ParentDirs(const std::vector<std::string>& paths);

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SSH_REMOTE_PATHS_H_
