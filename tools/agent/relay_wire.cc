#include "tools/agent/relay_wire.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fleetplan {

void SetSocketTimeouts(int fd, absl::Duration timeout) {
  timeval tv{};
  tv.tv_sec = std::max<int64_t>(1, absl::ToInt64Seconds(timeout));
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

absl::Status SocketError(absl::string_view what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

absl::Status SendAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t sent = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return SocketError("sending");
    data.remove_prefix(sent);
  }
  return absl::OkStatus();
}

absl::Status ReceiveExactly(int fd, char* buffer, size_t size) {
  while (size > 0) {
    ssize_t got = recv(fd, buffer, size, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got == 0) return absl::UnavailableError("the connection closed early");
    if (got < 0) return SocketError("receiving");
    buffer += got;
    size -= got;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReceiveLine(int fd, size_t limit) {
  std::string line;
  char c;
  while (true) {
    if (absl::Status got = ReceiveExactly(fd, &c, 1); !got.ok()) return got;
    if (c == '\n') return line;
    line.push_back(c);
    if (line.size() > limit) return absl::InvalidArgumentError("line too long");
  }
}

absl::StatusOr<std::string> ParseRelayMagic(absl::string_view line) {
  std::vector<absl::string_view> words = absl::StrSplit(line, ' ');
  if (words.size() != 2 || words[0] != kRelayMagic) {
    return absl::UnavailableError(absl::StrCat(
        "what answered is not a relay server (it said \"", absl::CHexEscape(line), "\")"));
  }
  return std::string(words[1]);
}

absl::StatusOr<size_t> ParseManifestSize(absl::string_view line) {
  size_t size = 0;
  if (!absl::SimpleAtoi(line, &size) || size > kMaxRelayManifest) {
    return absl::UnavailableError(
        absl::StrCat("a bad manifest size \"", absl::CHexEscape(line), "\""));
  }
  return size;
}

absl::StatusOr<std::vector<size_t>> ParseWantedEntries(absl::string_view line, size_t entries) {
  std::vector<size_t> wanted;
  for (absl::string_view word : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
    size_t index = 0;
    if (!absl::SimpleAtoi(word, &index) || index >= entries) {
      return absl::InvalidArgumentError(
          absl::StrCat("asked for entry '", absl::CHexEscape(word), "'"));
    }
    wanted.push_back(index);
  }
  return wanted;
}

bool SafeRelativePath(absl::string_view path) {
  if (path.empty() || path.front() == '/') return false;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

}  // namespace fleetplan
