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

std::string CheckWorkdir(const std::string& workdir, const std::string& state_dir, uint64_t bytes,
                         int* status) {
  std::string user;
  if (const char* logname = getenv("LOGNAME"); logname != nullptr && *logname != '\0') {
    user = logname;
  } else if (const passwd* entry = getpwuid(getuid()); entry != nullptr) {
    user = entry->pw_name;
  } else {
    user = absl::StrCat(getuid());
  }
  struct stat info;
  absl::Status made = stat(state_dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode)
                          ? absl::OkStatus()
                          : MakeDirs(state_dir);
  CheckResult check{"workdir", CheckStatus::kOk, ""};
  *status = 0;
  if (!made.ok() || access(workdir.c_str(), W_OK) != 0) {
    check.status = CheckStatus::kFail;
    check.message = absl::StrCat(
        workdir, ": cannot be created or written by ", user, " (",
        made.ok() ? "not writable" : std::string(made.message()), "); expected a folder ", user,
        " can write at this absolute path on every node; fix: choose a workdir on a writable "
        "filesystem, or create it and give ",
        user, " write access to it");
    *status = 1;
    return FormatCheckLine(check) + "\n";
  }
  struct statvfs fs;
  if (statvfs(workdir.c_str(), &fs) != 0) {
    check.status = CheckStatus::kSkip;
    check.message = absl::StrCat(workdir, ": writable by ", user,
                                 "; free space not checked: statvfs failed: ", strerror(errno));
    return FormatCheckLine(check) + "\n";
  }
  uint64_t kb = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize / 1024;
  if (bytes > kb * 1024) {
    check.status = CheckStatus::kFail;
    check.message = absl::StrCat(workdir, ": ", kb / 1024, " MiB free, the sync needs ",
                                 (bytes + 1048575) / 1048576,
                                 " MiB; expected at least the sync's size free; fix: free space "
                                 "on the filesystem of ",
                                 workdir, ", or choose another workdir");
    *status = 1;
  } else {
    check.message = absl::StrCat(workdir, ": writable by ", user, ", ", kb / 1024, " MiB free");
  }
  return FormatCheckLine(check) + "\n";
}

}  // namespace fleetplan
