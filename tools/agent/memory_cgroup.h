#ifndef FLEETPLAN_TOOLS_AGENT_MEMORY_CGROUP_H_
#define FLEETPLAN_TOOLS_AGENT_MEMORY_CGROUP_H_

// The kernel's own record of memory for a process: the memory cgroup it
// runs in (cgroup v1's memory controller, or v2's unified hierarchy), how
// many processes the OOM killer ended there (v1 memory.oom_control, v2
// memory.events: `oom_kill N`), and the limit that applies (v1
// memory.limit_in_bytes, v2 memory.max; else the node's MemTotal). A rank
// killed by SIGKILL while that count rose was the OOM killer's: never
// guessed from an exit status of 137.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace fleetplan {

// Where /proc and the cgroup mounts are; tests hand in a folder of their own.
struct KernelPaths {
  std::string proc = "/proc";
  std::string cgroups = "/sys/fs/cgroup";
};

struct MemoryCgroup {
  std::string dir;  // the cgroup's folder, holding its memory.* files
  bool v2 = false;
};

// The memory cgroup `pid` runs in, where it can be read; nullopt where the
// node has none or it is not mounted where `paths` say. A container that
// sees only its own cgroup (its path names the host's) reads the
// controller's root.
std::optional<MemoryCgroup> MemoryCgroupOf(pid_t pid, const KernelPaths& paths = {});

// How many processes the OOM killer ended in `cgroup`; nullopt where the
// kernel keeps no such count (v1 before Linux 4.13) or it cannot be read.
std::optional<uint64_t> OomKills(const MemoryCgroup& cgroup);

// The memory limit of `cgroup`; where it has none (or none is known), the
// node's memory (MemTotal); 0 when neither can be read.
uint64_t MemoryLimit(const std::optional<MemoryCgroup>& cgroup, const KernelPaths& paths = {});

// The figure of `key` in /proc/meminfo's text, in bytes ("MemTotal:
// 16318256 kB" → 16710094848); nullopt where it is missing or unreadable.
std::optional<uint64_t> MeminfoBytes(absl::string_view meminfo, absl::string_view key);

// What a process's start recorded, to compare with its end.
struct OomWatch {
  std::optional<MemoryCgroup> cgroup;
  std::optional<uint64_t> kills_at_start;
};
OomWatch WatchOomKills(pid_t pid, const KernelPaths& paths = {});
// True when the OOM killer ended a process in the watched cgroup since.
bool OomKilledSince(const OomWatch& watch);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_MEMORY_CGROUP_H_
