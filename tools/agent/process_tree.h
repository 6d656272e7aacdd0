#ifndef FLEETPLAN_TOOLS_AGENT_PROCESS_TREE_H_
#define FLEETPLAN_TOOLS_AGENT_PROCESS_TREE_H_

// A rank's processes as /proc shows them: the rank and everything it
// started, and the CPU time they used. What the agent watches a rank's
// progress by, and whose stacks it collects.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fleetplan {

struct ProcessInfo {
  pid_t pid = 0;
  pid_t ppid = 0;
  uint64_t cpu_ticks = 0;  // utime + stime, in clock ticks
  uint64_t rss_pages = 0;  // resident set size, in pages
};

// Every process of this machine (its pid namespace) that /proc lists now;
// those that vanish while being read are left out.
std::vector<ProcessInfo> ReadProcesses(const std::string& proc_root = "/proc");

// `root` and its descendants in `all`, `root` first, then breadth first;
// empty when `root` is not there.
std::vector<ProcessInfo> ProcessTree(const std::vector<ProcessInfo>& all, pid_t root);

// The parsed /proc/PID/stat line; false when it is not one.
bool ParseProcStat(const std::string& stat, ProcessInfo* info);

// The name of the program /proc/PID/exe points at ("python3.11"); empty
// when it cannot be read (the process is gone, or not the caller's).
std::string ExecutableName(pid_t pid);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_PROCESS_TREE_H_
