#include "tools/agent/rank_group.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "tools/agent/rank_failure.h"
#include "tools/process/files.h"

namespace fleetplan {
namespace {

// Output a finished rank's orphaned descendants may still hold open.
constexpr absl::Duration kDrainAfterExit = absl::Seconds(1);

}  // namespace

std::string GenerationHeader(const RankGroupOptions& options) {
  // An elastic job's generation follows a loss or a return as well as a
  // failure, and counts no restart for the first two: it says its size.
  std::string line =
      options.place.has_value()
          ? absl::StrCat("--- generation ", options.generation, " on ", options.place->num_nodes,
                         options.place->num_nodes == 1 ? " node" : " nodes")
          : absl::StrCat("--- restart ", options.generation, " of ", options.max_restarts);
  if (!options.restart_reason.empty()) absl::StrAppend(&line, " (", options.restart_reason, ")");
  return absl::StrCat(line, " ---\n");
}

void AgentMessage(int fd, absl::string_view node, absl::string_view text) {
  WriteFully(fd, absl::StrCat("[", node, "] agent: ", text, "\n"));
}

RankGroup::RankGroup(RankGroupOptions options) : options_(std::move(options)) {}

RankGroup::~RankGroup() {
  StopAll();
  for (int fd : logs_) {
    if (fd >= 0) close(fd);
  }
}

void RankGroup::Message(const std::string& text) {
  AgentMessage(options_.output_fd, options_.node, text);
}

void RankGroup::Log(size_t i, absl::string_view chunk) {
  if (logs_[i] >= 0) WriteFully(logs_[i], chunk);
}

void RankGroup::Start() {
  StartProgress();
  for (int i = 0; i < options_.nproc; ++i) {
    int rank = Rank(i);
    prefixers_.emplace_back(absl::StrCat("[", options_.node, "/", rank, "] "));
    output_bytes_.push_back(0);
    redactors_.emplace_back(options_.secret_values);
    std::string log_path = RankLogPath(options_.run_dir, rank);
    // Only the job's user may read what its ranks printed.
    logs_.push_back(open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
    if (logs_.back() < 0) Message(absl::StrCat("cannot open ", log_path, ": ", strerror(errno)));
    if (options_.generation > 0) Log(i, GenerationHeader(options_));
    absl::Status prepared =
        PrepareErrorFile(RankErrorPath(options_.run_dir, rank, options_.generation));
    if (!prepared.ok()) Message(std::string(prepared.message()));
    if (!options_.missing_secrets.empty()) {
      std::string why = absl::StrCat(
          "rank ", rank, " did not start: secret ", absl::StrJoin(options_.missing_secrets, ", "),
          " is not in the agent's environment (the node's secrets file is missing; "
          "`apply --force` writes it again)");
      Message(why);
      Log(i, absl::StrCat(why, "\n"));
      failed_[rank] = 127;
      ranks_.push_back(nullptr);
      continue;
    }
    RankContract contract =
        ForRank(options_.launcher, rank, i,
                Generation{options_.run_id, options_.generation, options_.max_restarts,
                           options_.run_dir},
                options_.program);
    SubprocessOptions spawn;
    spawn.argv = std::move(contract.argv);
    if (options_.place.has_value()) {
      spawn.env = GenerationContract(options_.launcher.launcher, *options_.place);
    }
    spawn.env.insert(spawn.env.end(), contract.env.begin(), contract.env.end());
    absl::StatusOr<std::unique_ptr<Subprocess>> process = Subprocess::Start(spawn);
    if (!process.ok()) {
      std::string why = absl::StrCat("rank ", rank, " did not start: ", process.status().message());
      Message(why);
      Log(i, absl::StrCat(why, "\n"));
      failed_[rank] = 127;
      ranks_.push_back(nullptr);
      continue;
    }
    oom_watches_.resize(ranks_.size());
    oom_watches_.push_back(WatchOomKills((*process)->pid(), options_.kernel_paths));
    ranks_.push_back(std::move(*process));
  }
}

std::vector<Subprocess*> RankGroup::Running() {
  std::vector<Subprocess*> all;
  started_index_.clear();
  for (size_t i = 0; i < ranks_.size(); ++i) {
    if (ranks_[i] == nullptr) continue;
    all.push_back(ranks_[i].get());
    started_index_.push_back(i);
  }
  return all;
}

IndexedOutput RankGroup::Forwarder() {
  // Indexes count only ranks that started; map them back.
  return [this](size_t index, absl::string_view chunk) {
    size_t i = started_index_[index];
    Write(i, redactors_[i].Feed(chunk));
  };
}

void RankGroup::StartProgress() {
  absl::StatusOr<StepPattern> pattern = StepPattern::Make(options_.progress_pattern);
  if (!pattern.ok()) {
    Message(absl::StrCat("steps are read from metric lines only: ", pattern.status().message()));
    pattern = StepPattern::Make("");
  }
  progress_ = std::make_unique<StepProgress>(*std::move(pattern), ProgressPath(options_.run_dir),
                                             options_.generation, options_.first_rank,
                                             options_.nproc);
}

void RankGroup::Write(size_t i, absl::string_view chunk) {
  if (i < output_bytes_.size()) output_bytes_[i] += chunk.size();
  if (progress_ != nullptr) progress_->Feed(i, chunk, absl::Now());
  Log(i, chunk);
  if (options_.output_fd >= 0) WriteFully(options_.output_fd, prefixers_[i].Feed(chunk));
}

std::vector<size_t> RankGroup::Pump(absl::Span<const int> watch, absl::Duration timeout) {
  std::vector<Subprocess*> running = Running();
  std::vector<size_t> ready = PumpOutput(running, watch, timeout, Forwarder());
  if (progress_ != nullptr) {
    if (absl::Status written = progress_->MaybeWrite(absl::Now()); !written.ok()) {
      Message(std::string(written.message()));
    }
  }
  return ready;
}

RankGroup::Progress RankGroup::Check() {
  if (!failed_.empty()) return Progress::kFailed;
  bool running = false, output = false;
  for (size_t i = 0; i < ranks_.size(); ++i) {
    std::optional<int> status = ranks_[i]->TryWait();
    if (!status.has_value()) {
      running = true;
    } else if (*status != 0) {
      failed_[Rank(i)] = *status;
    }
    output |= ranks_[i]->output_open();
  }
  if (!failed_.empty()) return Progress::kFailed;
  if (running) return Progress::kRunning;
  absl::Time now = absl::Now();
  if (all_exited_at_ == absl::InfiniteFuture()) all_exited_at_ = now;
  if (output && now - all_exited_at_ <= kDrainAfterExit) return Progress::kRunning;
  return Progress::kSucceeded;
}

void RankGroup::StopAll() {
  if (stopped_) return;
  stopped_ = true;
  std::vector<Subprocess*> running = Running();
  ::fleetplan::StopAll(running, options_.grace_period, Forwarder());
  for (size_t i = 0; i < ranks_.size(); ++i) {
    Write(i, redactors_[i].Flush());
    if (options_.output_fd >= 0) WriteFully(options_.output_fd, prefixers_[i].Flush());
  }
}

std::map<int, int> RankGroup::statuses() const {
  std::map<int, int> statuses = failed_;
  for (size_t i = 0; i < ranks_.size(); ++i) {
    if (ranks_[i] != nullptr && ranks_[i]->exit_status().has_value()) {
      statuses[Rank(i)] = *ranks_[i]->exit_status();
    }
  }
  return statuses;
}

RankError RankGroup::Explain(int rank) const {
  RankError error = ExplainRankFailure(RankErrorPath(options_.run_dir, rank, options_.generation),
                                       RankLogPath(options_.run_dir, rank), options_.secret_values);
  size_t i = static_cast<size_t>(rank - options_.first_rank);
  if (i >= ranks_.size() || ranks_[i] == nullptr || !ranks_[i]->exit_status().has_value()) {
    return error;
  }
  // How it ended, from the kernel's record: the wait status, and the OOM
  // killer's count in its cgroup (it kills with SIGKILL).
  const Subprocess::Ending& ending = ranks_[i]->ending();
  RankDeath& death = error.death;
  death.signal = ending.signal;
  death.core_dumped = ending.core_dumped;
  death.peak_rss_bytes = ending.peak_rss_bytes;
  if (ending.signal == SIGKILL && i < oom_watches_.size() && OomKilledSince(oom_watches_[i])) {
    death.oom_killed = true;
    death.memory_limit_bytes = MemoryLimit(oom_watches_[i].cgroup, options_.kernel_paths);
  }
  return error;
}

std::vector<uint64_t> RankGroup::output_bytes() const {
  std::vector<uint64_t> bytes = output_bytes_;
  bytes.resize(ranks_.size());
  return bytes;
}

std::vector<RankState> RankGroup::states() const {
  std::vector<RankState> states;
  for (size_t i = 0; i < ranks_.size(); ++i) {
    RankState state;
    state.rank = Rank(i);
    if (ranks_[i] != nullptr) {
      state.pid = ranks_[i]->pid();
      state.status = ranks_[i]->exit_status();
    } else {
      state.status = 127;
    }
    states.push_back(state);
  }
  return states;
}

}  // namespace fleetplan
