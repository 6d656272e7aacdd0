#include "tools/agent/job_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "tools/agent/line_prefixer.h"
#include "tools/process/files.h"
#include "tools/protocol/job_state.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {


std::optional<NodeJobState> ReadJobState(const std::string& log_dir) {
  absl::StatusOr<std::string> text = ReadFileToString(JobStatePath(log_dir));
  if (!text.ok()) return std::nullopt;
  absl::StatusOr<NodeJobState> state = JobStateFromJson(*text);
  if (!state.ok()) return std::nullopt;
  return *state;
}

// The run `latest` points at; empty when there is none.
std::string LatestRun(const std::string& log_dir) {
  char target[PATH_MAX];
  std::string link = absl::StrCat(log_dir, "/latest");
  ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
  if (n <= 0) return "";
  return std::string(target, n);
}

// The ranks with a log in `run_dir`, in order.
std::vector<int> RanksWithLogs(const std::string& run_dir) {
  std::vector<int> ranks;
  DIR* dir = opendir(run_dir.c_str());
  if (dir == nullptr) return ranks;
  while (dirent* entry = readdir(dir)) {
    absl::string_view name = entry->d_name;
    int rank;
    if (absl::ConsumePrefix(&name, "rank-") && absl::ConsumeSuffix(&name, ".log") &&
        absl::SimpleAtoi(name, &rank)) {
      ranks.push_back(rank);
    }
  }
  closedir(dir);
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

// Where the last `lines` lines of the file open on `fd` begin.
off_t TailOffset(int fd, int lines) {
  struct stat info;
  if (fstat(fd, &info) != 0) return 0;
  off_t end = info.st_size;
  off_t position = end;
  int newlines = 0;
  char buffer[65536];
  // A last line without a newline counts as a line.
  bool skip_final_newline = true;
  while (position > 0) {
    off_t start = std::max<off_t>(0, position - static_cast<off_t>(sizeof(buffer)));
    ssize_t n = pread(fd, buffer, position - start, start);
    if (n <= 0) return 0;
    for (ssize_t i = n - 1; i >= 0; --i) {
      if (buffer[i] != '\n') {
        skip_final_newline = false;
        continue;
      }
      if (skip_final_newline && start + i == end - 1) {
        skip_final_newline = false;
        continue;
      }
      if (++newlines == lines) return start + i + 1;
    }
    position = start;
  }
  return 0;
}

// One rank's log, read from where the last read ended.
class LogReader {
 public:
  LogReader(const std::string& path, std::string prefix, int tail)
      : path_(path), prefixer_(std::move(prefix)), tail_(tail) {}
  ~LogReader() {
    if (fd_ >= 0) close(fd_);
  }

  // Returns the new complete lines, prefixed.
  std::string ReadNew() {
    if (fd_ < 0) {
      fd_ = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd_ < 0) return "";
      if (tail_ >= 0) lseek(fd_, tail_ == 0 ? 0 : TailOffset(fd_, tail_), SEEK_SET);
      if (tail_ == 0) lseek(fd_, 0, SEEK_END);
    }
    std::string out;
    char buffer[65536];
    ssize_t n;
    while ((n = read(fd_, buffer, sizeof(buffer))) > 0) {
      out += prefixer_.Feed(absl::string_view(buffer, n));
    }
    return out;
  }
  std::string Flush() { return prefixer_.Flush(); }

 private:
  std::string path_;
  LinePrefixer prefixer_;
  int tail_;
  int fd_ = -1;
};

// An agent that was killed, or had died, left job.json saying it runs:
// record that nothing does any more.
void MarkStopped(const std::string& log_dir) {
  std::optional<NodeJobState> state = ReadJobState(log_dir);
  if (!state.has_value() || IsFinal(state->phase)) return;
  state->phase = JobPhase::kStopped;
  state->exit_status = 128 + 15;
  state->ended_at = state->updated_at = absl::Now();
  WriteFileAtomic(JobStatePath(log_dir), JobStateToJson(*state), 0600, Durability::kProcess)
      .IgnoreError();
}

}  // namespace

bool AgentAlive(int pid) {
  if (pid <= 0 || kill(pid, 0) != 0) return false;
  // A zombie has an empty command line; a reused pid another name.
  absl::StatusOr<std::string> cmdline = ReadFileToString(absl::StrCat("/proc/", pid, "/cmdline"));
  return cmdline.ok() && absl::StrContains(*cmdline, "fleetplan-agent");
}

absl::StatusOr<int> PrintRankLogs(const LogsOptions& options) {
  std::string run_id = options.run_id.empty() ? LatestRun(options.log_dir) : options.run_id;
  if (run_id.empty()) return 0;  // nothing ran here yet
  std::string run_dir = RunDir(options.log_dir, run_id);
  struct stat info;
  if (stat(run_dir.c_str(), &info) != 0) {
    return absl::NotFoundError(absl::StrCat("node '", options.node, "' has no run ", run_id));
  }
  std::map<int, std::unique_ptr<LogReader>> readers;
  auto read_all = [&]() {
    for (int rank : RanksWithLogs(run_dir)) {
      if (options.rank >= 0 && rank != options.rank) continue;
      auto& reader = readers[rank];
      if (reader == nullptr) {
        reader = std::make_unique<LogReader>(RankLogPath(run_dir, rank),
                                             absl::StrCat("[", options.node, "/", rank, "] "),
                                             options.tail);
      }
      WriteFully(options.output_fd, reader->ReadNew());
    }
  };
  auto flush_all = [&]() {
    for (auto& [rank, reader] : readers) WriteFully(options.output_fd, reader->Flush());
  };
  read_all();
  if (!options.follow) {
    flush_all();
    return 0;
  }
  // A job that ends within moments of its launch (the edit loop's quick
  // checks) is seen ending at once; a long one is polled at the interval.
  const absl::Time quick_until = absl::Now() + absl::Seconds(2);
  while (true) {
    std::optional<NodeJobState> state = ReadJobState(options.log_dir);
    bool current = state.has_value() && state->run_id == run_id;
    bool ended = !current || IsFinal(state->phase);
    bool gone = current && !ended && !AgentAlive(state->agent_pid);
    if (gone) {
      // It may have written its end just before it exited: read once more.
      state = ReadJobState(options.log_dir);
      ended = state.has_value() && state->run_id == run_id && IsFinal(state->phase);
      gone = !ended;
    }
    read_all();
    if (ended || gone) {
      flush_all();
      if (gone) {
        return absl::UnavailableError(absl::StrCat(
            "the agent of run ", run_id, " on node '", options.node,
            "' is gone without recording how the job ended"));
      }
      return current ? state->exit_status : 0;
    }
    absl::SleepFor(absl::Now() < quick_until
                       ? std::min(options.poll_interval, absl::Milliseconds(10))
                       : options.poll_interval);
  }
}

absl::StatusOr<std::string> StopNodeJob(const std::string& log_dir, absl::Duration grace) {
  std::optional<NodeJobState> state = ReadJobState(log_dir);
  if (!state.has_value()) return std::string("nothing running");
  std::vector<int> groups;
  for (const RankState& rank : state->ranks) {
    if (rank.pid > 0) groups.push_back(rank.pid);  // each rank leads its group
  }
  auto groups_left = [&groups]() {
    std::vector<int> left;
    for (int group : groups) {
      if (kill(-group, 0) == 0) left.push_back(group);
    }
    return left;
  };
  bool agent_alive = AgentAlive(state->agent_pid);
  if (!agent_alive && groups_left().empty()) {
    MarkStopped(log_dir);
    return IsFinal(state->phase)
               ? absl::StrCat("nothing running (run ", state->run_id, " ",
                              JobPhaseName(state->phase), ")")
               : absl::StrCat("nothing running (the agent of run ", state->run_id,
                              " is gone)");
  }
  if (agent_alive) {
    kill(state->agent_pid, SIGTERM);
    // The agent gives its ranks the grace period, then kills them.
    absl::Time deadline = absl::Now() + grace + absl::Seconds(5);
    while (AgentAlive(state->agent_pid) && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    if (AgentAlive(state->agent_pid)) kill(state->agent_pid, SIGKILL);
  }
  for (int group : groups_left()) kill(-group, SIGKILL);
  absl::Time deadline = absl::Now() + absl::Seconds(2);
  std::vector<int> left = groups_left();
  while ((!left.empty() || AgentAlive(state->agent_pid)) && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
    left = groups_left();
  }
  if (!left.empty() || AgentAlive(state->agent_pid)) {
    return absl::InternalError(absl::StrCat("processes of run ", state->run_id,
                                            " are still there: agent ", state->agent_pid,
                                            ", rank process groups ",
                                            absl::StrJoin(left, ", ")));
  }
  MarkStopped(log_dir);
  return absl::StrCat("stopped run ", state->run_id, " (agent ", state->agent_pid, ")");
}

}  // namespace fleetplan
