#include "tools/agent/process_tree.h"

#include <dirent.h>
#include <limits.h>
#include <unistd.h>

#include <cstdlib>
#include <deque>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tools/process/files.h"

namespace fleetplan {

bool ParseProcStat(const std::string& stat, ProcessInfo* info) {
  // "PID (comm) S PPID ..."; comm may hold spaces and parentheses, so the
  // fields are counted from the last ')'.
  size_t close = stat.rfind(')');
  if (close == std::string::npos || !absl::SimpleAtoi(stat.substr(0, stat.find(' ')), &info->pid)) {
    return false;
  }
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::string_view(stat).substr(close + 1), ' ', absl::SkipEmpty());
  // fields[0] is the state (field 3); ppid is field 4, utime 14, stime 15,
  // rss 24.
  uint64_t utime;
  uint64_t stime;
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[1], &info->ppid) ||
      !absl::SimpleAtoi(fields[11], &utime) || !absl::SimpleAtoi(fields[12], &stime)) {
    return false;
  }
  info->cpu_ticks = utime + stime;
  int64_t rss = 0;
  if (fields.size() > 21 && absl::SimpleAtoi(fields[21], &rss) && rss > 0) info->rss_pages = rss;
  return true;
}

std::vector<ProcessInfo> ReadProcesses(const std::string& proc_root) {
  std::vector<ProcessInfo> all;
  DIR* dir = opendir(proc_root.c_str());
  if (dir == nullptr) return all;
  while (dirent* entry = readdir(dir)) {
    int pid;
    if (!absl::SimpleAtoi(entry->d_name, &pid)) continue;
    absl::StatusOr<std::string> stat =
        ReadFileToString(absl::StrCat(proc_root, "/", entry->d_name, "/stat"));
    ProcessInfo info;
    if (stat.ok() && ParseProcStat(*stat, &info)) all.push_back(info);
  }
  closedir(dir);
  return all;
}

std::vector<ProcessInfo> ProcessTree(const std::vector<ProcessInfo>& all, pid_t root) {
  std::vector<ProcessInfo> tree;
  std::deque<pid_t> queue = {root};
  bool found_root = false;
  while (!queue.empty()) {
    pid_t pid = queue.front();
    queue.pop_front();
    for (const ProcessInfo& info : all) {
      if (info.pid == pid && (pid != root || !found_root)) {
        if (pid == root) found_root = true;
        tree.push_back(info);
      }
      if (info.ppid == pid && info.pid != root) queue.push_back(info.pid);
    }
    if (!found_root) return {};
  }
  return tree;
}

std::string ExecutableName(pid_t pid) {
  char target[PATH_MAX];
  std::string link = absl::StrCat("/proc/", pid, "/exe");
  ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
  if (n <= 0) return "";
  std::string path(target, n);
  return path.substr(path.rfind('/') + 1);
}

}  // namespace fleetplan
