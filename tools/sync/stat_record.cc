#include "tools/sync/stat_record.h"

#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tools/process/files.h"

namespace fleetplan {
namespace {

// A change this close to the record's writing may have landed after the
// file was read, within the file system's timestamp granularity.
constexpr int64_t kRacyNs = 2'000'000'000;

int64_t Nanoseconds(const timespec& at) {
  return static_cast<int64_t>(at.tv_sec) * 1'000'000'000 + at.tv_nsec;
}

}  // namespace

StatRecord::StatRecord(absl::string_view header) : header_(header) {}

StatRecord::Seen StatRecord::Of(const struct stat& st) {
  Seen seen;
  seen.size = static_cast<uint64_t>(st.st_size);
  seen.mode = static_cast<uint32_t>(st.st_mode & 07777);
  seen.mtime_ns = Nanoseconds(st.st_mtim);
  seen.ctime_ns = Nanoseconds(st.st_ctim);
  seen.inode = static_cast<uint64_t>(st.st_ino);
  return seen;
}

StatRecord StatRecord::Read(const std::string& path, absl::string_view header) {
  StatRecord record(header);
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return record;
  std::vector<absl::string_view> lines = absl::StrSplit(*text, '\n', absl::SkipEmpty());
  if (lines.empty() || !absl::StartsWith(lines[0], absl::StrCat(header, " ")) ||
      !absl::SimpleAtoi(lines[0].substr(header.size() + 1), &record.written_ns_)) {
    return StatRecord(header);
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<absl::string_view> fields = absl::StrSplit(lines[i], absl::MaxSplits(' ', 6));
    Seen seen;
    std::string file;
    if (fields.size() != 7 || !absl::SimpleAtoi(fields[0], &seen.size) ||
        !absl::SimpleAtoi(fields[1], &seen.mode) || !absl::SimpleAtoi(fields[2], &seen.mtime_ns) ||
        !absl::SimpleAtoi(fields[3], &seen.ctime_ns) || !absl::SimpleAtoi(fields[4], &seen.inode) ||
        !absl::CUnescape(fields[6], &file)) {
      return StatRecord(header);
    }
    seen.digest = std::string(fields[5]);
    record.files_[file] = std::move(seen);
  }
  return record;
}

std::optional<std::string> StatRecord::DigestIfUnchanged(const std::string& key,
                                                         const struct stat& st) const {
  auto it = files_.find(key);
  if (it == files_.end()) return std::nullopt;
  const Seen& seen = it->second;
  Seen now = Of(st);
  bool same = seen.size == now.size && seen.mode == now.mode && seen.mtime_ns == now.mtime_ns &&
              seen.ctime_ns == now.ctime_ns && seen.inode == now.inode;
  if (!same || now.ctime_ns >= written_ns_ - kRacyNs) return std::nullopt;
  return seen.digest;
}

void StatRecord::Add(const std::string& key, const struct stat& st, const std::string& digest) {
  Seen seen = Of(st);
  seen.digest = digest;
  files_[key] = std::move(seen);
}

std::string StatRecord::Serialize() const {
  std::string text = absl::StrCat(header_, " ", absl::ToUnixNanos(absl::Now()), "\n");
  for (const auto& [key, seen] : files_) {
    absl::StrAppend(&text, seen.size, " ", seen.mode, " ", seen.mtime_ns, " ", seen.ctime_ns, " ",
                    seen.inode, " ", seen.digest, " ", absl::CEscape(key), "\n");
  }
  return text;
}

absl::Status StatRecord::Write(const std::string& path) const {
  return WriteFileAtomic(path, Serialize(), 0600);
}

}  // namespace fleetplan
