#include "tools/agent/membership.h"

#include <algorithm>
#include <deque>
#include <utility>

namespace fleetplan {
namespace {

// The losses job.json keeps (a node that comes and goes for days adds one
// each time): the latest ones.
constexpr size_t kLostKept = 100;

}  // namespace

Membership::Membership(std::vector<std::string> nodes, std::vector<std::string> spares)
    : nodes_(std::move(nodes)), spares_(spares.begin(), spares.end()) {}

bool Membership::Known(const std::string& node) const {
  return std::find(nodes_.begin(), nodes_.end(), node) != nodes_.end();
}

void Membership::Join(const std::string& node, int nproc) {
  connected_.insert(node);
  lost_now_.erase(node);
  nproc_[node] = nproc;
}

bool Membership::Lose(const std::string& node, absl::Time at, const std::string& reason) {
  if (lost_now_.count(node) > 0) return false;  // said already
  connected_.erase(node);
  lost_now_.insert(node);
  lost_.push_back({node, at, reason});
  if (lost_.size() > kLostKept) lost_.erase(lost_.begin());
  if (!IsMember(node)) return false;
  ++node_losses_;
  return true;
}

bool Membership::IsMember(const std::string& node) const {
  return std::find(members_.begin(), members_.end(), node) != members_.end();
}

std::vector<std::string> Membership::Standby() const {
  std::vector<std::string> standby;
  for (const std::string& node : nodes_) {
    if (connected_.count(node) > 0 && !IsMember(node)) standby.push_back(node);
  }
  return standby;
}

std::vector<std::string> Membership::NextMembers() const {
  // Nodes that are no spares first, each group in spec order.
  std::deque<std::string> candidates;
  for (const std::string& node : Standby()) {
    if (spares_.count(node) == 0) candidates.push_back(node);
  }
  for (const std::string& node : Standby()) {
    if (spares_.count(node) > 0) candidates.push_back(node);
  }
  std::vector<std::string> next;
  for (const std::string& member : members_) {
    if (connected_.count(member) > 0) {
      next.push_back(member);
    } else if (!candidates.empty()) {
      next.push_back(candidates.front());
      candidates.pop_front();
    }
  }
  while (next.size() < full_size() && !candidates.empty()) {
    next.push_back(candidates.front());
    candidates.pop_front();
  }
  return next;
}

void Membership::Begin(int generation, std::vector<std::string> members, absl::Time now) {
  members_ = std::move(members);
  generations_.push_back({generation, now, members_});
  if (generations_.size() > kGenerationsKept) generations_.erase(generations_.begin());
}

std::vector<GenerationMember> Membership::Placed() const {
  std::vector<GenerationMember> placed;
  for (const std::string& member : members_) {
    auto nproc = nproc_.find(member);
    placed.push_back({member, nproc != nproc_.end() ? nproc->second : 1});
  }
  return placed;
}

std::vector<std::string> Membership::LostNow() const {
  std::vector<std::string> names;
  for (const std::string& node : nodes_) {
    if (lost_now_.count(node) > 0) names.push_back(node);
  }
  return names;
}

}  // namespace fleetplan
