#include "tools/agent/job_coordinator.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace fleetplan {
namespace {

// A hung job's exit status, as timeout(1)'s.
constexpr int kHungExitStatus = 124;

}  // namespace

JobCoordinator::JobCoordinator(Options options, absl::Time now)
    : options_(std::move(options)), joining_since_(now) {}

void JobCoordinator::Joined(const std::string& node) { joined_.insert(node); }

void JobCoordinator::Started(const std::string& node, int generation) {
  if (generation != generation_) return;
  this_generation_.started.insert(node);
  if (AllNodesIn(this_generation_.started)) everyone_started_once_ = true;
}

void JobCoordinator::RanksEnded(const std::string& node, int generation,
                                const std::map<int, int>& statuses,
                                const std::map<int, int>& failed,
                                const std::optional<RankError>& error) {
  if (generation != generation_ || stage_ == Stage::kEnded) return;
  this_generation_.ended.insert(node);
  bool all_zero = true;
  for (const auto& [rank, status] : statuses) all_zero &= status == 0;
  if (all_zero && failed.empty()) {
    this_generation_.succeeded.insert(node);
    return;
  }
  // Blame the first node to report a rank that failed by itself, and its
  // lowest such rank; ranks stopped by an order are not a cause.
  if (!this_generation_.failed && !failed.empty()) {
    this_generation_.failed = true;
    const auto& [rank, status] = *failed.begin();
    failure_ = JobFailure{node, rank, status, "", error};
  } else if (!this_generation_.failed && stage_ == Stage::kRunning) {
    // Non-zero statuses without a cause named: still a failure of the node.
    this_generation_.failed = true;
    for (const auto& [rank, status] : statuses) {
      if (status != 0) {
        failure_ = JobFailure{node, rank, status, ""};
        break;
      }
    }
  }
}

void JobCoordinator::Progressed(const std::string& node, int generation, absl::Time now) {
  if (generation != generation_ || stage_ != Stage::kRunning) return;
  hang_.last_progress = std::max(hang_.last_progress, now);
}

void JobCoordinator::StacksReported(const std::string& node, int generation,
                                    const std::vector<RankStack>& ranks) {
  if (generation != generation_ || stage_ != Stage::kCollecting) return;
  if (!hang_.reported.insert(node).second) return;
  for (RankStack rank : ranks) {
    rank.node = node;  // a node speaks for its own ranks only
    hang_.stacks.push_back(std::move(rank));
  }
}

void JobCoordinator::Lost(const std::string& node, const std::string& reason) {
  if (stage_ == Stage::kEnded || lost_.count(node) > 0) return;
  lost_.insert(node);
  this_generation_.ended.insert(node);
  if (!this_generation_.failed && !stop_requested_) {
    this_generation_.failed = true;
    failure_ = JobFailure{node, -1, 1, reason};
  }
}

void JobCoordinator::StopRequested() { stop_requested_ = true; }

bool JobCoordinator::AllNodesIn(const std::set<std::string>& nodes) const {
  for (const std::string& node : options_.nodes) {
    if (nodes.count(node) == 0) return false;
  }
  return true;
}

void JobCoordinator::BeginStopping(std::vector<Order>* orders) {
  stage_ = Stage::kStopping;
  orders->push_back({Order::Kind::kStop, generation_});
}

void JobCoordinator::End(JobPhase phase, std::vector<Order>* orders) {
  stage_ = Stage::kEnded;
  final_phase_ = phase;
  if (phase != JobPhase::kFailed) failure_.reset();
  orders->push_back({Order::Kind::kEnd, generation_});
}

std::vector<JobCoordinator::Order> JobCoordinator::Poll(absl::Time now) {
  std::vector<Order> orders;
  switch (stage_) {
    case Stage::kJoining:
      if (stop_requested_) {
        End(JobPhase::kStopped, &orders);
      } else if (!lost_.empty()) {
        End(JobPhase::kFailed, &orders);
      } else if (AllNodesIn(joined_)) {
        StartGeneration(now, &orders);
      } else if (now - joining_since_ > options_.join_timeout) {
        for (const std::string& node : options_.nodes) {
          if (joined_.count(node) > 0) continue;
          failure_ = JobFailure{node, -1, 1,
                                absl::StrCat("its agent did not reach the coordinator within ",
                                             absl::FormatDuration(options_.join_timeout))};
          break;
        }
        End(JobPhase::kFailed, &orders);
      }
      break;
    case Stage::kRunning:
      PollRunning(now, &orders);
      break;
    case Stage::kCollecting:
      PollCollecting(now, &orders);
      break;
    case Stage::kStopping:
      if (!AllNodesIn(this_generation_.ended)) break;
      if (stop_requested_) {
        End(JobPhase::kStopped, &orders);
      } else if (!lost_.empty() || generation_ >= options_.max_restarts) {
        End(JobPhase::kFailed, &orders);
      } else {
        stage_ = Stage::kBackoff;
        backoff_until_ = now + options_.restart_backoff;
      }
      break;
    case Stage::kBackoff:
      if (stop_requested_) {
        End(JobPhase::kStopped, &orders);
      } else if (now >= backoff_until_) {
        ++generation_;
        this_generation_ = GenerationNodes();
        StartGeneration(now, &orders);
      }
      break;
    case Stage::kEnded:
      break;
  }
  return orders;
}

void JobCoordinator::StartGeneration(absl::Time now, std::vector<Order>* orders) {
  stage_ = Stage::kRunning;
  hang_.last_progress = now;  // a generation's start counts as progress
  hang_.reported.clear();
  hang_.stacks.clear();
  orders->push_back({Order::Kind::kStart, generation_});
}

void JobCoordinator::PollRunning(absl::Time now, std::vector<Order>* orders) {
  if (stop_requested_ || this_generation_.failed) {
    BeginStopping(orders);
  } else if (AllNodesIn(this_generation_.succeeded)) {
    End(JobPhase::kSucceeded, orders);
  } else if (options_.hang_timeout > absl::ZeroDuration() &&
             now - hang_.last_progress > options_.hang_timeout) {
    stage_ = Stage::kCollecting;
    hang_.collect_until = now + options_.collect_timeout;
    orders->push_back({Order::Kind::kCollectStacks, generation_});
  }
}

void JobCoordinator::PollCollecting(absl::Time now, std::vector<Order>* orders) {
  // A real failure or a stop while stacks are collected wins: stop now.
  if (stop_requested_ || this_generation_.failed) {
    BeginStopping(orders);
    return;
  }
  std::set<std::string> answered = hang_.reported;
  answered.insert(lost_.begin(), lost_.end());
  answered.insert(this_generation_.ended.begin(), this_generation_.ended.end());
  if (!AllNodesIn(answered) && now < hang_.collect_until) return;
  StackSummary summary = GroupStacks(hang_.stacks);
  for (const std::string& node : options_.nodes) {
    if (hang_.reported.count(node) > 0 || (this_generation_.ended.count(node) > 0 && lost_.count(node) == 0)) continue;
    summary.skips.push_back(
        {node, {}, absl::StrCat("its agent sent no stacks within ",
                                absl::FormatDuration(options_.collect_timeout))});
  }
  this_generation_.failed = true;
  failure_ = JobFailure{"", -1, kHungExitStatus,
                        absl::StrCat("no rank made progress for ",
                                     absl::FormatDuration(options_.hang_timeout)),
                        std::nullopt, std::move(summary)};
  BeginStopping(orders);
}

JobPhase JobCoordinator::phase() const {
  if (stage_ == Stage::kEnded) return final_phase_;
  return everyone_started_once_ ? JobPhase::kRunning : JobPhase::kStarting;
}

int JobCoordinator::exit_status() const {
  if (stage_ != Stage::kEnded) return 0;
  switch (final_phase_) {
    case JobPhase::kSucceeded:
      return 0;
    case JobPhase::kStopped:
      return 128 + 15;
    default:
      return failure_.has_value() ? failure_->status : 1;
  }
}

}  // namespace fleetplan
