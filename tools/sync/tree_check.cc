#include "tools/sync/tree_check.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "tools/process/fd.h"
#include "tools/process/files.h"
#include "tools/sync/stat_record.h"

namespace fleetplan {
namespace {

constexpr absl::string_view kHeader = "fleetplan-checked 1";

// stat(2) of paths under a root through a descriptor of the folder each
// lies in, not the whole path: the kernel then looks up one component per
// file, where a whole path (a workdir some folders deep) cost most of a
// check of an unchanged tree. The manifest lists files in path order, so
// a folder's files come together and one open folder is enough.
class FolderStats {
 public:
  explicit FolderStats(const std::string& root)
      : root_(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {}

  // Whether `relative` (links followed) could be stat'ed, into `*st`.
  bool Stat(const std::string& relative, struct stat* st) {
    if (root_.get() < 0) return false;
    size_t slash = relative.rfind('/');
    if (slash == std::string::npos) return fstatat(root_.get(), relative.c_str(), st, 0) == 0;
    absl::string_view folder(relative.data(), slash);
    if (folder != folder_name_ || folder_.get() < 0) {
      folder_name_ = std::string(folder);
      folder_ = Fd(openat(root_.get(), folder_name_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    }
    return folder_.get() >= 0 && fstatat(folder_.get(), relative.c_str() + slash + 1, st, 0) == 0;
  }

 private:
  Fd root_;
  std::string folder_name_;
  Fd folder_;
};

}  // namespace

std::string CheckRecordPath(const std::string& manifest_path) {
  return absl::StrCat(manifest_path, ".checked");
}

std::vector<std::string> CheckTree(const std::string& root, const Manifest& manifest,
                                   const std::string& record_path) {
  StatRecord before =
      record_path.empty() ? StatRecord(kHeader) : StatRecord::Read(record_path, kHeader);
  StatRecord after(kHeader);
  std::vector<std::string> mismatches;
  FolderStats stats(root);
  for (const ManifestEntry& listed : manifest.entries) {
    struct stat st;
    if (!stats.Stat(listed.path, &st) || !S_ISREG(st.st_mode) ||
        static_cast<uint64_t>(st.st_size) != listed.size || (st.st_mode & 07777) != listed.mode) {
      mismatches.push_back(listed.path);
      continue;
    }
    // As it was when its bytes were last read and matched: not read again.
    if (before.DigestIfUnchanged(listed.path, st) != listed.digest) {
      absl::StatusOr<std::string> digest = DigestFile(absl::StrCat(root, "/", listed.path));
      if (!digest.ok() || *digest != listed.digest) {
        mismatches.push_back(listed.path);
        continue;
      }
    }
    after.Add(listed.path, st, listed.digest);
  }
  if (!record_path.empty()) {
    // Only a tree that passed is worth remembering.
    WriteFileAtomic(record_path, mismatches.empty() ? after.Serialize() : "", 0600,
                    Durability::kProcess)
        .IgnoreError();
  }
  return mismatches;
}

}  // namespace fleetplan
