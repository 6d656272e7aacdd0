#include "tools/agent/supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/agent/line_prefixer.h"
#include "tools/process/subprocess.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

constexpr absl::Duration kPollInterval = absl::Milliseconds(50);
// Output a finished rank's orphaned descendants may still hold open.
constexpr absl::Duration kDrainAfterExit = absl::Seconds(1);

// Writes all of `data`, waiting when `fd` is non-blocking and full. Errors
// are dropped: a closed stdout must not stop the ranks (stdin EOF does).
void WriteFully(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      pollfd pfd = {fd, POLLOUT, 0};
      poll(&pfd, 1, 100);
    } else {
      return;
    }
  }
}

enum class Outcome { kSucceeded, kFailed, kStopped };

// One start of the whole set of ranks.
class Attempt {
 public:
  Attempt(const SupervisorOptions& options, const std::string& run_dir)
      : options_(options), run_dir_(run_dir) {}

  // Runs the ranks until all succeed, one fails, or a stop is asked for;
  // afterwards no rank runs. `statuses` gets each rank's exit status.
  Outcome Run(int attempt, std::map<int, int>* failed, std::map<int, int>* statuses) {
    Start(attempt);
    Outcome outcome = Supervise(failed);
    if (outcome != Outcome::kSucceeded) {
      StopAll(All(), options_.grace_period, Forwarder());
    }
    for (size_t i = 0; i < ranks_.size(); ++i) {
      WriteFully(options_.output_fd, prefixers_[i].Flush());
      if (ranks_[i] != nullptr) (*statuses)[Rank(i)] = *ranks_[i]->exit_status();
      if (logs_[i] >= 0) close(logs_[i]);
    }
    return outcome;
  }

 private:
  int Rank(size_t i) const { return options_.first_rank + static_cast<int>(i); }

  void Message(const std::string& text) {
    WriteFully(options_.output_fd, absl::StrCat("[", options_.node, "] agent: ", text, "\n"));
  }

  void Start(int attempt) {
    for (int i = 0; i < options_.nproc; ++i) {
      int rank = Rank(i);
      prefixers_.emplace_back(absl::StrCat("[", options_.node, "/", rank, "] "));
      std::string log_path = RankLogPath(run_dir_, rank);
      logs_.push_back(open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
      if (logs_.back() < 0) Message(absl::StrCat("cannot open ", log_path, ": ", strerror(errno)));
      if (attempt > 0) Log(i, absl::StrCat("--- restart ", attempt, " ---\n"));

      SubprocessOptions spawn;
      spawn.argv = options_.program;
      spawn.env = {{"RANK", absl::StrCat(rank)}, {"LOCAL_RANK", absl::StrCat(i)}};
      auto process = Subprocess::Start(spawn);
      if (!process.ok()) {
        Message(absl::StrCat("rank ", rank, " did not start: ", process.status().message()));
        start_failures_[rank] = 127;
        ranks_.push_back(nullptr);
        continue;
      }
      ranks_.push_back(std::move(*process));
    }
  }

  // Waits for the end of the attempt; fills `failed` with the ranks that
  // failed by themselves (before any were stopped).
  Outcome Supervise(std::map<int, int>* failed) {
    *failed = start_failures_;
    if (!failed->empty()) return Outcome::kFailed;
    std::vector<int> watch;
    if (options_.stdin_fd >= 0) watch.push_back(options_.stdin_fd);
    if (options_.stop_fd >= 0) watch.push_back(options_.stop_fd);
    std::optional<absl::Time> all_exited_at;
    while (true) {
      std::vector<Subprocess*> all = All();
      for (size_t ready : PumpOutput(all, watch, kPollInterval, Forwarder())) {
        if (StopRequested(watch[ready])) return Outcome::kStopped;
      }
      bool running = false, output = false;
      for (size_t i = 0; i < ranks_.size(); ++i) {
        std::optional<int> status = ranks_[i]->TryWait();
        if (!status.has_value()) {
          running = true;
        } else if (*status != 0) {
          (*failed)[Rank(i)] = *status;
        }
        output |= ranks_[i]->output_open();
      }
      if (!failed->empty()) return Outcome::kFailed;
      if (running) continue;
      if (!all_exited_at.has_value()) all_exited_at = absl::Now();
      if (!output || absl::Now() - *all_exited_at > kDrainAfterExit) {
        return Outcome::kSucceeded;
      }
    }
  }

  // Reads a watched descriptor; true when it asks to stop.
  bool StopRequested(int fd) {
    char buffer[4096];
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return false;
    if (fd == options_.stdin_fd && n > 0) return false;  // input is ignored
    Message(fd == options_.stdin_fd ? "stdin closed; stopping all ranks"
                                    : "signalled; stopping all ranks");
    return true;
  }

  void Log(size_t i, absl::string_view chunk) {
    if (logs_[i] >= 0) WriteFully(logs_[i], chunk);
  }

  IndexedOutput Forwarder() {
    // Indexes count only ranks that started; map them back.
    return [this](size_t index, absl::string_view chunk) {
      size_t i = started_index_[index];
      Log(i, chunk);
      WriteFully(options_.output_fd, prefixers_[i].Feed(chunk));
    };
  }

  std::vector<Subprocess*> All() {
    std::vector<Subprocess*> all;
    started_index_.clear();
    for (size_t i = 0; i < ranks_.size(); ++i) {
      if (ranks_[i] == nullptr) continue;
      all.push_back(ranks_[i].get());
      started_index_.push_back(i);
    }
    return all;
  }

  const SupervisorOptions& options_;
  const std::string& run_dir_;
  std::vector<std::unique_ptr<Subprocess>> ranks_;  // null: did not start
  std::vector<LinePrefixer> prefixers_;
  std::vector<int> logs_;
  std::vector<size_t> started_index_;
  std::map<int, int> start_failures_;
};

absl::Status Validate(const SupervisorOptions& options) {
  if (options.node.empty()) return absl::InvalidArgumentError("--node is required");
  if (options.nproc < 1) return absl::InvalidArgumentError("--nproc must be at least 1");
  if (options.first_rank < 0) return absl::InvalidArgumentError("--first-rank must be >= 0");
  if (options.restarts < 0) return absl::InvalidArgumentError("--restarts must be >= 0");
  if (options.log_dir.empty()) return absl::InvalidArgumentError("--log-dir is required");
  if (options.program.empty()) {
    return absl::InvalidArgumentError("no program: give it after `--`");
  }
  return absl::OkStatus();
}

}  // namespace

int LowestFailingRank(const std::map<int, int>& statuses) {
  for (const auto& [rank, status] : statuses) {
    if (status != 0) return rank;  // std::map: ascending rank order
  }
  return -1;
}

absl::StatusOr<AgentResult> RunSupervisor(const SupervisorOptions& options) {
  FP_RETURN_IF_ERROR(Validate(options));
  AgentResult result;
  result.node = options.node;
  result.run_id = MakeRunId(absl::Now(), getpid());
  FP_ASSIGN_OR_RETURN(std::string run_dir, CreateRunDir(options.log_dir, result.run_id));

  for (int attempt = 0;; ++attempt) {
    std::map<int, int> failed, statuses;
    Outcome outcome = Attempt(options, run_dir).Run(attempt, &failed, &statuses);
    // A failure is blamed on the ranks that failed by themselves, not on
    // those the agent stopped because of it.
    const std::map<int, int>& blamed = failed.empty() ? statuses : failed;
    result.failed_rank = LowestFailingRank(blamed);
    result.status = result.failed_rank < 0 ? 0 : blamed.at(result.failed_rank);
    if (outcome != Outcome::kFailed || attempt >= options.restarts) break;
    result.restarts = attempt + 1;
    WriteFully(options.output_fd,
               absl::StrCat("[", options.node, "] agent: rank ", result.failed_rank,
                            " exited with status ", result.status,
                            "; restarting all ranks (restart ", result.restarts, " of ",
                            options.restarts, ")\n"));
  }
  FP_RETURN_IF_ERROR(WriteResult(options.log_dir, result));
  return result;
}

}  // namespace fleetplan
