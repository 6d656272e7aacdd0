#include "tools/sync/tree_check.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "tools/process/files.h"
#include "tools/sync/stat_record.h"

namespace fleetplan {
namespace {

constexpr absl::string_view kHeader = "fleetplan-checked 1";

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
  for (const ManifestEntry& listed : manifest.entries) {
    std::string path = absl::StrCat(root, "/", listed.path);
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        static_cast<uint64_t>(st.st_size) != listed.size ||
        (st.st_mode & 07777) != listed.mode) {
      mismatches.push_back(listed.path);
      continue;
    }
    // As it was when its bytes were last read and matched: not read again.
    if (before.DigestIfUnchanged(listed.path, st) != listed.digest) {
      absl::StatusOr<std::string> digest = DigestFile(path);
      if (!digest.ok() || *digest != listed.digest) {
        mismatches.push_back(listed.path);
        continue;
      }
    }
    after.Add(listed.path, st, listed.digest);
  }
  if (!record_path.empty()) {
    // Only a tree that passed is worth remembering.
    WriteFileAtomic(record_path, mismatches.empty() ? after.Serialize() : "", 0600)
        .IgnoreError();
  }
  return mismatches;
}

}  // namespace fleetplan
