#include "tools/process/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <functional>

#include "absl/strings/str_cat.h"
#include "tools/util/path_policy.h"
#include "tools/util/status_macros.h"

namespace fleetplan {

namespace {

absl::Status PathError(absl::string_view what, const std::string& path, int err) {
  std::string message = absl::StrCat(what, " \"", path, "\": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(message);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
  return absl::InternalError(message);
}

absl::Status WriteAll(int fd, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return PathError("cannot write", path, errno);
    data.remove_prefix(n);
  }
  return absl::OkStatus();
}

// The rest of the open file `fd` (`path` names it in errors).
absl::StatusOr<std::string> ReadAll(int fd, const std::string& path) {
  std::string content;
  char buffer[65536];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return PathError("cannot read", path, errno);
    if (n == 0) return content;
    content.append(buffer, n);
  }
}

// Creates a temporary file beside `path`, lets `fill` write it, then chmods,
// fsyncs (for kCrash) and renames it into place; the temporary goes on any
// failure.
absl::Status ReplaceAtomically(const std::string& path, uint32_t mode,
                               const std::function<absl::Status(int fd)>& fill,
                               Durability durability = Durability::kCrash) {
  FP_RETURN_IF_ERROR(MakeDirs(Dirname(path)));
  std::string temp = path + ".tmp.XXXXXX";
  int fd = mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return PathError("cannot create a temporary file for", path, errno);
  absl::Status status = fill(fd);
  if (status.ok() && fchmod(fd, mode) != 0) status = PathError("cannot chmod", temp, errno);
  if (status.ok() && durability == Durability::kCrash && fsync(fd) != 0) {
    status = PathError("cannot fsync", temp, errno);
  }
  if (close(fd) != 0 && status.ok()) status = PathError("cannot close", temp, errno);
  if (status.ok() && rename(temp.c_str(), path.c_str()) != 0) {
    status = PathError("cannot rename into", path, errno);
  }
  if (!status.ok()) unlink(temp.c_str());
  return status;
}

}  // namespace

absl::Status MakeDirs(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("\"", path, "\" exists and is not a directory"));
  }
  std::string parent = Dirname(path);
  if (parent != path) FP_RETURN_IF_ERROR(MakeDirs(parent));
  // EEXIST: created meanwhile by someone else, which is fine.
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return PathError("cannot create directory", path, errno);
  }
  return absl::OkStatus();
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return PathError("cannot open", path, errno);
  absl::StatusOr<std::string> content = ReadAll(fd, path);
  close(fd);
  return content;
}

std::optional<std::string> ReadRegularFileAt(int dir, const char* name) {
  int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st;
  absl::StatusOr<std::string> content =
      fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
          ? ReadAll(fd, name)
          : absl::StatusOr<std::string>(absl::FailedPreconditionError("not a regular file"));
  close(fd);
  if (!content.ok()) return std::nullopt;
  return *std::move(content);
}

bool ListFolderAt(int dir, std::vector<std::string>* names) {
  // fdopendir takes the descriptor it is given: a copy, so `dir` stays.
  int listed = dup(dir);
  DIR* stream = listed < 0 ? nullptr : fdopendir(listed);
  if (stream == nullptr) {
    int err = errno;
    if (listed >= 0) close(listed);
    errno = err;
    return false;
  }
  errno = 0;
  while (dirent* entry = readdir(stream)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names->push_back(std::move(name));
  }
  int err = errno;
  closedir(stream);
  errno = err;
  return err == 0;
}

absl::Status WriteFileAtomic(const std::string& path, absl::string_view content, uint32_t mode,
                             Durability durability) {
  return ReplaceAtomically(
      path, mode, [&](int fd) { return WriteAll(fd, content, path); }, durability);
}

absl::Status CopyFileAtomic(const std::string& from, const std::string& to,
                            uint32_t mode) {
  int in = open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return PathError("cannot open", from, errno);
  absl::Status status = ReplaceAtomically(to, mode, [&](int out) {
    char buffer[65536];
    while (true) {
      ssize_t n = read(in, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return PathError("cannot read", from, errno);
      if (n == 0) return absl::OkStatus();
      FP_RETURN_IF_ERROR(WriteAll(out, absl::string_view(buffer, n), to));
    }
  });
  close(in);
  return status;
}

void WriteFully(int fd, absl::string_view data) {
  while (fd >= 0 && !data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      pollfd pfd = {fd, POLLOUT, 0};
      poll(&pfd, 1, 100);
    } else {
      return;
    }
  }
}

}  // namespace fleetplan
