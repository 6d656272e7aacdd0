#include "tools/agent/sync_checks.h"

#include <pwd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/process/files.h"
#include "tools/protocol/check_line.h"
#include "tools/sync/manifest.h"
#include "tools/sync/tree_check.h"

namespace fleetplan {

TreeCheckReport CheckSyncedTree(const std::string& root, const std::string& manifest_path) {
  absl::StatusOr<std::string> text = ReadFileToString(manifest_path);
  absl::StatusOr<Manifest> manifest = text.ok() ? ParseManifest(*text) : text.status();
  if (!manifest.ok()) {
    return {1, absl::StrCat("cannot check ", root, ": ", manifest_path, ": ",
                            manifest.status().message())};
  }
  std::vector<std::string> mismatches = CheckTree(root, *manifest, CheckRecordPath(manifest_path));
  if (mismatches.empty()) {
    return {0, absl::StrCat(manifest->entries.size(), " files as listed")};
  }
  constexpr size_t kNamed = 10;
  return {
      1, absl::StrCat(mismatches.size(), " of ", manifest->entries.size(),
                      " files differ from what was sent: ",
                      absl::StrJoin(mismatches.begin(),
                                    mismatches.begin() + std::min(kNamed, mismatches.size()), ", "),
                      mismatches.size() > kNamed ? ", ..." : "")};
}

}  // namespace fleetplan
