#include "tools/agent/job_coordinator.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fleetplan {
namespace {

// A hung job's exit status, as timeout(1)'s.
constexpr int kHungExitStatus = 124;

// "1 node", "3 nodes".
std::string Nodes(int count) { return absl::StrCat(count, count == 1 ? " node" : " nodes"); }

}  // namespace

JobCoordinator::JobCoordinator(Options options, absl::Time now)
    : options_(std::move(options)),
      joining_since_(now),
      membership_(options_.nodes, options_.elastic.spares) {}

bool JobCoordinator::Elastic() const {
  return !options_.elastic.spares.empty() || MinNodes() < static_cast<int>(membership_.full_size());
}

int JobCoordinator::MinNodes() const {
  return options_.elastic.min_nodes > 0 ? options_.elastic.min_nodes
                                        : static_cast<int>(membership_.full_size());
}

void JobCoordinator::Joined(const std::string& node, int nproc) {
  if (stage_ == Stage::kEnded || !membership_.Known(node)) return;
  membership_.Join(node, nproc);
}

bool JobCoordinator::MayJoin(const std::string& node) const {
  return membership_.Known(node) && !membership_.Connected(node);
}

void JobCoordinator::Started(const std::string& node, int generation) {
  if (generation != generation_ || !membership_.IsMember(node)) return;
  this_generation_.started.insert(node);
  if (AllNodesIn(this_generation_.started)) everyone_started_once_ = true;
}

void JobCoordinator::RanksEnded(const std::string& node, int generation,
                                const std::map<int, int>& statuses,
                                const std::map<int, int>& failed,
                                const std::optional<RankError>& error) {
  if (generation != generation_ || stage_ == Stage::kEnded || !membership_.IsMember(node)) {
    return;
  }
  this_generation_.ended.insert(node);
  bool all_zero = true;
  for (const auto& [rank, status] : statuses) all_zero &= status == 0;
  if (all_zero && failed.empty()) {
    this_generation_.succeeded.insert(node);
    return;
  }
  // Blame the first node to report a rank that failed by itself, and its
  // lowest such rank; ranks stopped by an order are not a cause, nor are
  // failures after a member was lost.
  bool first = !this_generation_.failed && !this_generation_.lost_member;
  if (!this_generation_.failed && !failed.empty()) {
    this_generation_.failed = true;
    const auto& [rank, status] = *failed.begin();
    if (first) failure_ = JobFailure{node, rank, status, "", error};
  } else if (!this_generation_.failed && stage_ == Stage::kRunning) {
    // Non-zero statuses without a cause named: still a failure of the node.
    this_generation_.failed = true;
    for (const auto& [rank, status] : statuses) {
      if (status != 0 && first) {
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

void JobCoordinator::Lost(const std::string& node, const std::string& reason, absl::Time now) {
  if (stage_ == Stage::kEnded || membership_.WasLost(node)) return;
  bool was_member = membership_.Lose(node, now, reason);
  if (stage_ == Stage::kJoining) {
    // Before the first generation: a job that needs every node fails now.
    if (!Elastic() && !stop_requested_ && !failure_.has_value()) {
      failure_ = JobFailure{node, -1, 1, reason};
    }
    return;
  }
  if (!was_member) return;  // a node on standby leaves the reserve
  this_generation_.ended.insert(node);
  if (!this_generation_.failed && !this_generation_.lost_member && !stop_requested_) {
    failure_ = JobFailure{node, -1, 1, reason};
    counts_.why = absl::StrCat("lost node '", node, "': ", reason);
  }
  this_generation_.lost_member = true;
}

void JobCoordinator::StopRequested() { stop_requested_ = true; }

bool JobCoordinator::AllNodesIn(const std::set<std::string>& nodes) const {
  for (const std::string& node : membership_.members()) {
    if (nodes.count(node) == 0) return false;
  }
  return true;
}

bool JobCoordinator::ShouldGrow() const {
  // "restart": a node that came back grows the job at once; else at the
  // next failure.
  return options_.elastic.rejoin == "restart" && !membership_.Standby().empty() &&
         membership_.members().size() < membership_.full_size();
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
      PollJoining(now, &orders);
      break;
    case Stage::kRunning:
      PollRunning(now, &orders);
      break;
    case Stage::kCollecting:
      PollCollecting(now, &orders);
      break;
    case Stage::kStopping:
      PollStopping(now, &orders);
      break;
    case Stage::kBackoff:
      if (stop_requested_) {
        End(JobPhase::kStopped, &orders);
      } else if (now >= backoff_until_) {
        ++generation_;
        StartNext(now, &orders);
      }
      break;
    case Stage::kEnded:
      break;
  }
  return orders;
}

void JobCoordinator::PollJoining(absl::Time now, std::vector<Order>* orders) {
  size_t connected = membership_.Standby().size();
  size_t lost = membership_.LostNow().size();
  if (stop_requested_) {
    End(JobPhase::kStopped, orders);
  } else if (!Elastic() && lost > 0) {
    End(JobPhase::kFailed, orders);
  } else if (connected == options_.nodes.size() ||
             (Elastic() && connected + lost == options_.nodes.size())) {
    StartNext(now, orders);
  } else if (now - joining_since_ > options_.join_timeout) {
    std::string reason = absl::StrCat("its agent did not reach the coordinator within ",
                                      absl::FormatDuration(options_.join_timeout));
    for (const std::string& node : options_.nodes) {
      if (membership_.Connected(node) || membership_.WasLost(node)) continue;
      if (!failure_.has_value()) failure_ = JobFailure{node, -1, 1, reason};
      membership_.Lose(node, now, reason);
    }
    if (Elastic()) {
      StartNext(now, orders);
    } else {
      End(JobPhase::kFailed, orders);
    }
  }
}

void JobCoordinator::PollStopping(absl::Time now, std::vector<Order>* orders) {
  if (!AllNodesIn(this_generation_.ended)) return;
  if (stop_requested_) {
    End(JobPhase::kStopped, orders);
    return;
  }
  // A generation that lost a member or grows back costs no restart: the
  // ranks' failures in it follow from the loss.
  if (this_generation_.lost_member && !MayRunOn(membership_.NextMembers())) {
    End(JobPhase::kFailed, orders);
    return;
  }
  if (this_generation_.lost_member || this_generation_.grow) {
    // The backoff keeps a crash loop from spinning; a change of members is
    // none, so the next generation starts at once.
    ++generation_;
    StartNext(now, orders);
    return;
  }
  if (counts_.restarts_used >= options_.max_restarts) {
    End(JobPhase::kFailed, orders);
    return;
  }
  ++counts_.restarts_used;
  if (failure_.has_value()) counts_.why = DescribeFailure(*failure_);
  stage_ = Stage::kBackoff;
  backoff_until_ = now + options_.restart_backoff;
}

bool JobCoordinator::MayRunOn(const std::vector<std::string>& next) {
  std::string lost = absl::StrJoin(membership_.LostNow(), ", ");
  std::string last = membership_.lost().empty() ? "" : membership_.lost().back().node;
  if (options_.elastic.max_node_losses >= 0 &&
      membership_.node_losses() > options_.elastic.max_node_losses) {
    failure_ =
        JobFailure{last, -1, 1,
                   absl::StrCat("lost ", Nodes(membership_.node_losses()),
                                ", more than max_node_losses = ", options_.elastic.max_node_losses,
                                " (lost now: ", lost, ")")};
    return false;
  }
  if (static_cast<int>(next.size()) >= MinNodes()) return true;
  // A job that needs every node keeps the first failure, as it always did.
  if (Elastic() && !membership_.lost().empty()) {
    failure_ = JobFailure{last, -1, 1,
                          absl::StrCat(membership_.lost().back().reason, "; ",
                                       Nodes(static_cast<int>(next.size())),
                                       " left, fewer than min_nodes = ", MinNodes(),
                                       " (lost: ", lost, ")")};
  }
  return false;
}

void JobCoordinator::StartNext(absl::Time now, std::vector<Order>* orders) {
  std::vector<std::string> next = membership_.NextMembers();
  if (!MayRunOn(next)) {
    End(JobPhase::kFailed, orders);
    return;
  }
  this_generation_ = GenerationNodes();
  membership_.Begin(generation_, std::move(next), now);
  StartGeneration(now, orders);
}

void JobCoordinator::StartGeneration(absl::Time now, std::vector<Order>* orders) {
  stage_ = Stage::kRunning;
  hang_.last_progress = now;  // a generation's start counts as progress
  hang_.reported.clear();
  hang_.stacks.clear();
  orders->push_back({Order::Kind::kStart, generation_});
}

void JobCoordinator::PollRunning(absl::Time now, std::vector<Order>* orders) {
  if (stop_requested_ || this_generation_.failed || this_generation_.lost_member) {
    BeginStopping(orders);
  } else if (ShouldGrow()) {
    this_generation_.grow = true;
    counts_.why = absl::StrCat("node '", membership_.Standby().front(),
                               "' is back: growing the job to ", membership_.full_size(),
                               " nodes");
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
  // A real failure, a loss or a stop while stacks are collected wins.
  if (stop_requested_ || this_generation_.failed || this_generation_.lost_member) {
    BeginStopping(orders);
    return;
  }
  std::set<std::string> answered = hang_.reported;
  answered.insert(this_generation_.ended.begin(), this_generation_.ended.end());
  if (!AllNodesIn(answered) && now < hang_.collect_until) return;
  StackSummary summary = GroupStacks(hang_.stacks);
  for (const std::string& node : membership_.members()) {
    if (hang_.reported.count(node) > 0 || this_generation_.ended.count(node) > 0) continue;
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
