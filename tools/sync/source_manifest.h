#ifndef FLEETPLAN_TOOLS_SYNC_SOURCE_MANIFEST_H_
#define FLEETPLAN_TOOLS_SYNC_SOURCE_MANIFEST_H_

// The source tree's manifest as plan and apply take it, with the digests of
// the last walk kept in the user's cache folder: an edit loop reads the
// edited files again, not the whole tree (git's index does the same).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/sync/manifest.h"

namespace fleetplan {

// Where the digests of the tree at `root` are kept:
// $XDG_CACHE_HOME/fleetplan/digests/<digest of root>, with ~/.cache when
// XDG_CACHE_HOME is unset; "" when neither is known (no cache).
std::string DigestCachePath(const std::string& root);

// BuildManifest(root, exclude) with the cache at `cache_path` ("" : none).
// The cache is only ever a shortcut: one that cannot be read is ignored,
// one that cannot be written is left as it was, and the manifest is the
// same either way.
absl::StatusOr<Manifest> BuildSourceManifest(const std::string& root,
                                             const std::vector<std::string>& exclude,
                                             const std::string& cache_path);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SYNC_SOURCE_MANIFEST_H_
