#ifndef FLEETPLAN_PLUGINS_RELATIVE_PATH_H_
#define FLEETPLAN_PLUGINS_RELATIVE_PATH_H_

// Paths a transport receives relative to a destination root (synced files,
// files to remove) must land under that root on the node, whatever the
// manifest or a saved plan says. Every transport checks them here.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

// InvalidArgument naming `path` and `root` when `path` is empty, absolute,
// or climbs out through a ".." part.
absl::Status CheckStaysUnderRoot(absl::string_view root, absl::string_view path);

// `root/path` once CheckStaysUnderRoot passes.
absl::StatusOr<std::string> JoinUnderRoot(absl::string_view root, absl::string_view path);

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_RELATIVE_PATH_H_
