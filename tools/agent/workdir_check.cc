#include "tools/agent/workdir_check.h"

#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/process/files.h"
#include "tools/sync/manifest.h"
#include "tools/util/path_policy.h"

namespace fleetplan {
namespace {

// As the shell version names the user: $LOGNAME, else the password entry.
std::string UserName() {
  if (const char* logname = getenv("LOGNAME"); logname != nullptr && *logname != '\0') {
    return logname;
  }
  const passwd* entry = getpwuid(geteuid());
  return entry != nullptr ? entry->pw_name : absl::StrCat(geteuid());
}

uint64_t MiB(uint64_t bytes) { return bytes / (1024 * 1024); }

// The sizes an earlier sync left, as its manifest lists them; 0 without one.
uint64_t HeldBytes(const std::string& manifest_path) {
  if (manifest_path.empty()) return 0;
  absl::StatusOr<std::string> text = ReadFileToString(manifest_path);
  if (!text.ok()) return 0;
  absl::StatusOr<Manifest> manifest = ParseManifest(*text);
  if (!manifest.ok()) return 0;
  uint64_t held = 0;
  for (const ManifestEntry& entry : manifest->entries) held += entry.size;
  return held;
}

// The nearest folder at or above `path` that exists.
std::string NearestExisting(std::string path) {
  struct stat st;
  while (stat(path.c_str(), &st) != 0 && path != "/") path = Dirname(path);
  return path;
}

CheckResult Fail(std::string message) {
  return {std::string(kCheckWorkdir), CheckStatus::kFail, std::move(message)};
}

// Where the workdir is or will be made, and what to say of it; a failure
// when it cannot be a folder there.
struct Place {
  std::string dir;   // the workdir, or the folder it will be made in
  std::string note;  // "writable by U" or "does not exist yet; ..."
  struct stat st;
};
absl::StatusOr<Place> PlaceOf(const std::string& workdir, const std::string& user) {
  Place place{workdir, absl::StrCat("writable by ", user), {}};
  if (stat(workdir.c_str(), &place.st) == 0) {
    if (S_ISDIR(place.st.st_mode)) return place;
    return absl::FailedPreconditionError(absl::StrCat(
        workdir, ": exists but is not a folder; expected a folder at this absolute path; fix: "
                 "move it away or choose another workdir"));
  }
  place.dir = NearestExisting(workdir);
  if (stat(place.dir.c_str(), &place.st) != 0 || !S_ISDIR(place.st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        workdir, ": cannot be created: ", place.dir, " is not a folder; expected a folder at "
        "this absolute path; fix: move ", place.dir, " away or choose another workdir"));
  }
  place.note = absl::StrCat("does not exist yet; ", user, " can create it in ", place.dir);
  return place;
}

// Why `place` is not writable, and the fix.
std::string NotWritable(const std::string& workdir, const Place& place, const std::string& user,
                        bool read_only) {
  std::string why = read_only ? "on a read-only filesystem"
                              : absl::StrFormat("owner uid %d, mode %o", place.st.st_uid,
                                                place.st.st_mode & 07777);
  std::string fix = read_only ? "choose a workdir on a writable filesystem"
                              : absl::StrCat("chmod u+w ", place.dir, " or chown it to ", user,
                                             ", or choose another workdir");
  return absl::StrCat(workdir, ": ",
                      place.dir == workdir
                          ? "not writable"
                          : absl::StrCat("cannot be created: ", place.dir, " is not writable"),
                      " by ", user, " (", why, "); expected a folder ", user,
                      " can write at this absolute path on every node; fix: ", fix);
}

}  // namespace

CheckResult CheckWorkdir(const PreflightRequest& request) {
  const std::string& workdir = request.workdir;
  std::string user = UserName();
  if (!request.check_only) {
    if (absl::Status made = MakeDirs(request.state_dir); !made.ok()) {
      return Fail(absl::StrCat(workdir, ": cannot be created or written by ", user, " (",
                               made.message(), "); expected a folder ", user,
                               " can write at this absolute path on every node; fix: choose a "
                               "workdir on a writable filesystem, or create it and give ",
                               user, " write access to it"));
    }
  }
  absl::StatusOr<Place> place = PlaceOf(workdir, user);
  if (!place.ok()) return Fail(std::string(place.status().message()));
  struct statvfs fs;
  bool have_fs = statvfs(place->dir.c_str(), &fs) == 0;
  std::string fs_error = have_fs ? "" : std::strerror(errno);
  if (access(place->dir.c_str(), W_OK) != 0) {
    bool read_only = errno == EROFS || (have_fs && (fs.f_flag & ST_RDONLY) != 0);
    return Fail(NotWritable(workdir, *place, user, read_only));
  }
  if (!have_fs) {
    return {std::string(kCheckWorkdir), CheckStatus::kSkip,
            absl::StrCat(workdir, ": ", place->note, "; free space not checked (statvfs ",
                         place->dir, ": ", fs_error, ")")};
  }
  uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  uint64_t held = HeldBytes(request.manifest);
  uint64_t more = request.sync_bytes > held ? request.sync_bytes - held : 0;
  if (more > free_bytes) {
    return Fail(absl::StrCat(workdir, ": ", MiB(free_bytes), " MiB free, the sync needs ",
                             MiB(more + 1048575), " MiB; expected at least the sync's size "
                             "free; fix: free space on the filesystem of ", place->dir,
                             ", or choose another workdir"));
  }
  return {std::string(kCheckWorkdir), CheckStatus::kOk,
          absl::StrCat(workdir, ": ", place->note, ", ", MiB(free_bytes), " MiB free")};
}

std::string CheckWorkdirBeforeSync(const std::string& workdir, const std::string& state_dir,
                                   uint64_t bytes, int* status) {
  PreflightRequest request;
  request.workdir = workdir;
  request.state_dir = state_dir;
  request.sync_bytes = bytes;  // what the sync sends: nothing held counts
  CheckResult check = CheckWorkdir(request);
  *status = check.status == CheckStatus::kFail ? 1 : 0;
  return FormatCheckLine(check) + "\n";
}

}  // namespace fleetplan
