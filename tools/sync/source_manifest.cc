#include "tools/sync/source_manifest.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "tools/util/digest.h"

namespace fleetplan {

std::string DigestCachePath(const std::string& root) {
  std::string base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') {
    base = absl::StrCat(home, "/.cache");
  } else {
    return "";
  }
  return absl::StrCat(base, "/fleetplan/digests/", DigestHex(root));
}

absl::StatusOr<Manifest> BuildSourceManifest(const std::string& root,
                                             const std::vector<std::string>& exclude,
                                             const std::string& cache_path) {
  if (cache_path.empty()) return BuildManifest(root, exclude);
  DigestCache cache;
  cache.known = StatRecord::Read(cache_path, DigestCache::kDigestCacheHeader);
  absl::StatusOr<Manifest> manifest = BuildManifest(root, exclude, &cache);
  // Rewritten only when it learnt something (a file read, one gone).
  if (manifest.ok() && (cache.files_read > 0 || cache.seen.size() != cache.known.size())) {
    cache.seen.Write(cache_path).IgnoreError();
  }
  return manifest;
}

}  // namespace fleetplan
