#ifndef FLEETPLAN_TOOLS_SYNC_STAT_RECORD_H_
#define FLEETPLAN_TOOLS_SYNC_STAT_RECORD_H_

// A record of files whose bytes were read and digested, keyed by what stat
// says of them (inode, size, mode, modification and change times), as
// git's index does: a file whose stat is as recorded need not be read
// again. A change too close to the record's writing (within the file
// system's timestamp granularity) cannot be told apart from the state that
// was read, so such "racy" entries are read again. Used on the nodes by the
// tree check after a sync and on this machine by the source manifest.

#include <sys/stat.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

class StatRecord {
 public:
  // Reads the record at `path` written with `header` (a line naming the
  // format, e.g. "fleetplan-checked 1"). A missing, unreadable, malformed
  // or foreign record is an empty one: every file is read.
  static StatRecord Read(const std::string& path, absl::string_view header);

  // An empty record, written as `header`.
  explicit StatRecord(absl::string_view header);

  // The digest recorded for `key` when `st` is what was recorded and the
  // file's last change is older than the record by the racy margin.
  std::optional<std::string> DigestIfUnchanged(const std::string& key,
                                               const struct stat& st) const;

  // Notes that the file `key`, as `st` says, had `digest`.
  void Add(const std::string& key, const struct stat& st, const std::string& digest);

  size_t size() const { return files_.size(); }

  // The record's text, stamped with the time now.
  std::string Serialize() const;
  // Writes it atomically to `path`, creating parent folders.
  absl::Status Write(const std::string& path) const;

 private:
  struct Seen {
    uint64_t size = 0;
    uint32_t mode = 0;
    int64_t mtime_ns = 0;
    int64_t ctime_ns = 0;
    uint64_t inode = 0;
    std::string digest;
  };
  static Seen Of(const struct stat& st);

  std::string header_;
  int64_t written_ns_ = 0;  // of a record read; 0 for a new one
  std::map<std::string, Seen> files_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SYNC_STAT_RECORD_H_
