#include "tools/agent/memory_cgroup.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/process/files.h"

namespace fleetplan {
namespace {

// `dir`, else the controller's root where only that is visible (a
// container whose /proc names the host's path).
std::optional<MemoryCgroup> Existing(const std::string& root, const std::string& path,
                                     const char* probe, bool v2) {
  std::string dir = path == "/" ? root : absl::StrCat(root, path);
  if (IsRegularFile(absl::StrCat(dir, "/", probe))) return MemoryCgroup{dir, v2};
  if (IsRegularFile(absl::StrCat(root, "/", probe))) return MemoryCgroup{root, v2};
  return std::nullopt;
}

// The number after `key` on a line of `path` ("oom_kill 3").
std::optional<uint64_t> KeyedNumber(const std::string& path, absl::string_view key) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return std::nullopt;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    uint64_t value = 0;
    if (words.size() == 2 && words[0] == key && absl::SimpleAtoi(words[1], &value)) return value;
  }
  return std::nullopt;
}

}  // namespace

std::optional<MemoryCgroup> MemoryCgroupOf(pid_t pid, const KernelPaths& paths) {
  absl::StatusOr<std::string> text =
      ReadFileToString(absl::StrCat(paths.proc, "/", pid, "/cgroup"));
  if (!text.ok()) return std::nullopt;
  std::optional<std::string> unified;
  // "4:memory:/docker/abc" (v1), "0::/user.slice/x" (v2).
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
    std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (parts.size() != 3) continue;
    std::vector<absl::string_view> controllers = absl::StrSplit(parts[1], ',');
    for (absl::string_view controller : controllers) {
      if (controller != "memory") continue;
      std::optional<MemoryCgroup> v1 = Existing(absl::StrCat(paths.cgroups, "/memory"), parts[2],
                                                "memory.limit_in_bytes", false);
      if (v1.has_value()) return v1;
    }
    if (parts[0] == "0" && parts[1].empty()) unified = parts[2];
  }
  if (!unified.has_value()) return std::nullopt;
  // v2 alone at the mount, or beside v1 under unified/.
  for (const std::string& root : {paths.cgroups, absl::StrCat(paths.cgroups, "/unified")}) {
    std::optional<MemoryCgroup> v2 = Existing(root, *unified, "memory.events", true);
    if (v2.has_value()) return v2;
  }
  return std::nullopt;
}

std::optional<uint64_t> MeminfoBytes(absl::string_view meminfo, absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(meminfo, '\n')) {
    if (!absl::ConsumePrefix(&line, key) || !absl::ConsumePrefix(&line, ":")) continue;
    line = absl::StripAsciiWhitespace(line);
    bool kib = absl::ConsumeSuffix(&line, " kB");
    uint64_t value;
    if (!absl::SimpleAtoi(line, &value)) return std::nullopt;
    return kib ? value * 1024 : value;
  }
  return std::nullopt;
}

std::optional<uint64_t> OomKills(const MemoryCgroup& cgroup) {
  return KeyedNumber(absl::StrCat(cgroup.dir, cgroup.v2 ? "/memory.events" : "/memory.oom_control"),
                     "oom_kill");
}

uint64_t MemoryLimit(const std::optional<MemoryCgroup>& cgroup, const KernelPaths& paths) {
  if (cgroup.has_value()) {
    absl::StatusOr<std::string> text = ReadFileToString(
        absl::StrCat(cgroup->dir, cgroup->v2 ? "/memory.max" : "/memory.limit_in_bytes"));
    uint64_t limit = 0;
    // v1 writes "no limit" as a page-rounded LONG_MAX, v2 as "max".
    if (text.ok() && absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &limit) &&
        limit < (uint64_t{1} << 62)) {
      return limit;
    }
  }
  absl::StatusOr<std::string> meminfo = ReadFileToString(absl::StrCat(paths.proc, "/meminfo"));
  if (!meminfo.ok()) return 0;
  return MeminfoBytes(*meminfo, "MemTotal").value_or(0);
}

OomWatch WatchOomKills(pid_t pid, const KernelPaths& paths) {
  OomWatch watch;
  watch.cgroup = MemoryCgroupOf(pid, paths);
  if (watch.cgroup.has_value()) watch.kills_at_start = OomKills(*watch.cgroup);
  return watch;
}

bool OomKilledSince(const OomWatch& watch) {
  if (!watch.cgroup.has_value() || !watch.kills_at_start.has_value()) return false;
  std::optional<uint64_t> now = OomKills(*watch.cgroup);
  return now.has_value() && *now > *watch.kills_at_start;
}

}  // namespace fleetplan
