#include "tools/agent/rank_failure.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tools/agent/redactor.h"

namespace fleetplan {
namespace {

// The end of a log read for its last lines.
constexpr size_t kLogEndBytes = 64 << 10;

// Up to `max_bytes` of the file at `path` from `offset` (from the end when
// negative); never follows a link.
absl::StatusOr<std::string> ReadPart(const std::string& path, off_t offset, size_t max_bytes) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(path, ": not a regular file"));
  }
  if (offset < 0) offset = std::max<off_t>(0, st.st_size + offset);
  std::string text(max_bytes, '\0');
  size_t got = 0;
  while (got < max_bytes) {
    ssize_t n = pread(fd, text.data() + got, max_bytes - got, offset + got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += n;
  }
  close(fd);
  text.resize(got);
  return text;
}

std::string Redact(const std::vector<std::string>& secret_values, const std::string& text) {
  Redactor redactor(secret_values);
  if (redactor.empty()) return text;
  std::string out = redactor.Feed(text);
  return out + redactor.Flush();
}

// Redacted, then bounded again: "***" is longer than a short value, and a
// value may end inside a character.
std::string Hidden(const std::vector<std::string>& secret_values, const std::string& text,
                   size_t max_bytes) {
  return BoundedUtf8(Redact(secret_values, text), max_bytes);
}

}  // namespace

absl::Status PrepareErrorFile(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("cannot create the error file ", path, ": ", std::strerror(errno)));
  }
  // A file left by an earlier agent keeps its mode through O_CREAT.
  int changed = fchmod(fd, 0600);
  int err = errno;
  close(fd);
  if (changed != 0) {
    return absl::InternalError(absl::StrCat("cannot make ", path, " private: ", strerror(err)));
  }
  return absl::OkStatus();
}

RankError ExplainRankFailure(const std::string& error_file, const std::string& log_file,
                             const std::vector<std::string>& secret_values) {
  // One byte more than a file may hold tells a huge file from a full one.
  absl::StatusOr<std::string> recorded = ReadPart(error_file, 0, kMaxErrorFileBytes + 1);
  absl::StatusOr<RankError> error =
      recorded.ok() ? ParseErrorFile(*recorded) : absl::StatusOr<RankError>(recorded.status());
  if (error.ok()) {
    error->message = Hidden(secret_values, error->message, kMaxErrorMessageBytes);
    error->file = Hidden(secret_values, error->file, kMaxErrorNameBytes);
    error->function = Hidden(secret_values, error->function, kMaxErrorNameBytes);
    return *error;
  }
  absl::StatusOr<std::string> log_end =
      ReadPart(log_file, -static_cast<off_t>(kLogEndBytes), kLogEndBytes);
  // The log was written redacted; its end may still cut a value in two.
  return FromLogTail(log_end.ok() ? Redact(secret_values, *log_end) : "");
}

}  // namespace fleetplan
