#include "tools/sync/tree_check.h"

#include <sys/stat.h>

#include <cstdint>
#include <map>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tools/process/files.h"

namespace fleetplan {
namespace {

constexpr absl::string_view kHeader = "fleetplan-checked 1";
// A change this close to the record's writing may have landed after the
// file was read, within the file system's timestamp granularity.
constexpr int64_t kRacyNs = 2'000'000'000;

// What stat says of a file, and the digest its bytes had when it matched.
struct Seen {
  uint64_t size = 0;
  uint32_t mode = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  uint64_t inode = 0;
  std::string digest;

  bool SameFile(const Seen& other) const {
    return size == other.size && mode == other.mode && mtime_ns == other.mtime_ns &&
           ctime_ns == other.ctime_ns && inode == other.inode;
  }
};

int64_t Nanoseconds(const timespec& at) {
  return static_cast<int64_t>(at.tv_sec) * 1'000'000'000 + at.tv_nsec;
}

struct Record {
  int64_t written_ns = 0;
  std::map<std::string, Seen> files;
};

// An unreadable or malformed record is no record: every file is read.
Record ReadRecord(const std::string& path) {
  Record record;
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return record;
  std::vector<absl::string_view> lines = absl::StrSplit(*text, '\n', absl::SkipEmpty());
  if (lines.empty() || !absl::StartsWith(lines[0], kHeader) ||
      !absl::SimpleAtoi(lines[0].substr(kHeader.size()), &record.written_ns)) {
    return Record();
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<absl::string_view> fields = absl::StrSplit(lines[i], absl::MaxSplits(' ', 6));
    Seen seen;
    std::string file;
    if (fields.size() != 7 || !absl::SimpleAtoi(fields[0], &seen.size) ||
        !absl::SimpleAtoi(fields[1], &seen.mode) || !absl::SimpleAtoi(fields[2], &seen.mtime_ns) ||
        !absl::SimpleAtoi(fields[3], &seen.ctime_ns) || !absl::SimpleAtoi(fields[4], &seen.inode) ||
        !absl::CUnescape(fields[6], &file)) {
      return Record();
    }
    seen.digest = std::string(fields[5]);
    record.files[file] = std::move(seen);
  }
  return record;
}

}  // namespace

std::string CheckRecordPath(const std::string& manifest_path) {
  return absl::StrCat(manifest_path, ".checked");
}

std::vector<std::string> CheckTree(const std::string& root, const Manifest& manifest,
                                   const std::string& record_path) {
  Record before = record_path.empty() ? Record() : ReadRecord(record_path);
  std::string after = absl::StrCat(kHeader, " ", absl::ToUnixNanos(absl::Now()), "\n");
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
    Seen now{static_cast<uint64_t>(st.st_size), static_cast<uint32_t>(st.st_mode & 07777),
             Nanoseconds(st.st_mtim), Nanoseconds(st.st_ctim), static_cast<uint64_t>(st.st_ino),
             listed.digest};
    auto seen = before.files.find(listed.path);
    bool unchanged_since = seen != before.files.end() && seen->second.SameFile(now) &&
                           seen->second.digest == listed.digest &&
                           now.ctime_ns < before.written_ns - kRacyNs;
    if (!unchanged_since) {
      absl::StatusOr<std::string> digest = DigestFile(path);
      if (!digest.ok() || *digest != listed.digest) {
        mismatches.push_back(listed.path);
        continue;
      }
    }
    absl::StrAppend(&after, now.size, " ", now.mode, " ", now.mtime_ns, " ", now.ctime_ns, " ",
                    now.inode, " ", now.digest, " ", absl::CEscape(listed.path), "\n");
  }
  if (!record_path.empty()) {
    // Only a tree that passed is worth remembering.
    WriteFileAtomic(record_path, mismatches.empty() ? after : "", 0644).IgnoreError();
  }
  return mismatches;
}

}  // namespace fleetplan
