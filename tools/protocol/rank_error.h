#ifndef FLEETPLAN_TOOLS_PROTOCOL_RANK_ERROR_H_
#define FLEETPLAN_TOOLS_PROTOCOL_RANK_ERROR_H_

// Why a rank failed, in its own words: the exception its script recorded
// (torch.distributed.elastic.multiprocessing.errors.record writes it as JSON
// to TORCHELASTIC_ERROR_FILE, torch/.../errors/error_handler.py), or,
// without one, the last lines it printed. The agent on the rank's node reads
// it; job.json and the agents' messages carry it, every field bounded.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json_fwd.hpp"

namespace fleetplan {

// How much of an error file is read, and how long each field may be.
inline constexpr size_t kMaxErrorFileBytes = 64 << 10;
inline constexpr size_t kMaxErrorMessageBytes = 4 << 10;
inline constexpr size_t kMaxErrorNameBytes = 512;  // type, file, function
inline constexpr size_t kMaxLogTailBytes = 4 << 10;
inline constexpr int kLogTailLines = 10;

// How a rank ended, from the kernel's own record (the wait status, its
// cgroup's oom_kill counter), never guessed from an exit status: a script's
// `exit 137` is no SIGKILL.
struct RankDeath {
  int signal = 0;  // the signal that ended it; 0: it exited by itself
  bool core_dumped = false;
  // The kernel's OOM killer: its cgroup's oom_kill count rose while it ran
  // and it ended by SIGKILL.
  bool oom_killed = false;
  uint64_t peak_rss_bytes = 0;      // its largest resident set; 0: unknown
  uint64_t memory_limit_bytes = 0;  // its cgroup's limit, else the node's memory; 0: unknown

  bool operator==(const RankDeath& other) const;
};

// "killed by SIGKILL (signal 9)", ", core dumped", "; the kernel's OOM
// killer ended it: peak RSS 63.9 MiB of a 64.0 MiB limit"; "" for a rank
// that exited by itself.
std::string DescribeRankDeath(const RankDeath& death);

struct RankError {
  std::string type;      // "ValueError"; empty when no exception was recorded
  std::string message;   // "bad shard 7"
  std::string file;      // the innermost frame's file, line and function
  int line = 0;
  std::string function;
  std::string log_tail;  // the rank's last lines, when no exception was recorded
  RankDeath death;

  bool operator==(const RankError& other) const;
};

// The exception in an error file's `contents` (at most kMaxErrorFileBytes;
// more is an error): {"message": {"message": "Type: text", "extraInfo":
// {"py_callstack": "Traceback ...", ...}}}, or a plain "message" string.
// Fields are cut to their bounds and made valid UTF-8. InvalidArgument for
// anything else (empty, truncated, not JSON, no message).
absl::StatusOr<RankError> ParseErrorFile(absl::string_view contents);

// The last kLogTailLines lines of `output` (the end of a rank's log), at
// most kMaxLogTailBytes of it, valid UTF-8.
RankError FromLogTail(absl::string_view output);

// "ValueError: bad shard 7 (at /w/train.py:12 in load)"; with no exception,
// "" (the log tail is shown apart, on lines of its own).
std::string DescribeRankError(const RankError& error);

// {type, message, file, line, function, log_tail, signal, core_dumped,
// oom_killed, peak_rss_bytes, memory_limit_bytes} (the last five absent
// from what agents before them wrote: read as zero).
nlohmann::json RankErrorToJson(const RankError& error);
// InvalidArgument naming `document` and the field that is missing, of
// another type or over its bound.
absl::StatusOr<RankError> RankErrorFromJson(const nlohmann::json& json,
                                            absl::string_view document);

// At most `max_bytes` of `text` (its end with `keep_end`), with every byte
// that is not part of valid UTF-8 replaced by '?': what a bounded field of
// a JSON document can hold.
std::string BoundedUtf8(absl::string_view text, size_t max_bytes, bool keep_end = false);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_RANK_ERROR_H_
