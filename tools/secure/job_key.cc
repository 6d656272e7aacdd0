#include "tools/secure/job_key.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "tools/secure/crypto_api.h"

namespace fleetplan {

absl::StatusOr<JobKey> MakeJobKey() {
  JobKey key;
  size_t filled = 0;
  while (filled < key.bytes.size()) {
    ssize_t n = getrandom(key.bytes.data() + filled, key.bytes.size() - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::InternalError(absl::StrCat("getrandom: ", std::strerror(errno)));
    }
    filled += n;
  }
  return key;
}

std::string JobKeyFileText(const JobKey& key) {
  return absl::StrCat(absl::BytesToHexString(key.view()), "\n");
}

absl::StatusOr<JobKey> ParseJobKey(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  JobKey key;
  if (text.size() != 2 * key.bytes.size()) {
    return absl::InvalidArgumentError("the job key is not 64 hex digits");
  }
  for (char c : text) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError("the job key is not 64 hex digits");
    }
  }
  std::string bytes = absl::HexStringToBytes(text);
  std::memcpy(key.bytes.data(), bytes.data(), key.bytes.size());
  return key;
}

absl::StatusOr<JobKey> ReadJobKeyFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no job key there"));
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open the job key ", path, ": ", std::strerror(errno)));
  }
  struct stat info;
  std::string text(200, '\0');
  ssize_t n = -1;
  if (fstat(fd, &info) == 0) n = read(fd, text.data(), text.size());
  int error = errno;
  close(fd);
  if (n < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read the job key ", path, ": ", std::strerror(error)));
  }
  if (!S_ISREG(info.st_mode) || info.st_uid != geteuid() || (info.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return absl::FailedPreconditionError(
        absl::StrCat("the job key ", path, " is not a file of this user's alone (mode ", mode,
                     ", owner ", info.st_uid, "); refusing it"));
  }
  text.resize(n);
  absl::StatusOr<JobKey> key = ParseJobKey(text);
  if (!key.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", key.status().message()));
  return key;
}

absl::StatusOr<std::string> KeyedDigestHex(absl::string_view key, absl::string_view data) {
  absl::StatusOr<const CryptoApi*> crypto = Crypto();
  if (!crypto.ok()) return crypto.status();
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if ((*crypto)->hmac((*crypto)->sha256(), key.data(), static_cast<int>(key.size()),
                      reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac,
                      &length) == nullptr) {
    return absl::InternalError("HMAC-SHA256 failed");
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(mac), length));
}

}  // namespace fleetplan
