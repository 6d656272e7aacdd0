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

}  // namespace fleetplan
