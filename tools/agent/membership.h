#ifndef FLEETPLAN_TOOLS_AGENT_MEMBERSHIP_H_
#define FLEETPLAN_TOOLS_AGENT_MEMBERSHIP_H_

// Which nodes of an elastic job run its ranks, generation by generation:
// the coordinator's bookkeeping (job_coordinator.h decides when a
// generation ends; this says who runs the next one). Pure, like the
// coordinator.
//
// Every node is connected (its agent said hello and is heard), lost, or
// has not joined yet. A connected node is a member of the current
// generation or on standby: a spare in reserve, or a node that came back
// after it was lost. The next generation keeps the connected members in
// their places, puts a standby node in the place of each lost one (nodes
// that are no spares first, then spares, each in spec order), and grows
// with standby nodes up to the job's full size (the nodes that are no
// spares); the standby nodes left stay in reserve.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/protocol/job_state.h"
#include "tools/protocol/launcher_contract.h"

namespace fleetplan {

class Membership {
 public:
  // `nodes` in spec order; `spares` among them.
  Membership(std::vector<std::string> nodes, std::vector<std::string> spares);

  bool Known(const std::string& node) const;
  bool Connected(const std::string& node) const { return connected_.count(node) > 0; }
  bool WasLost(const std::string& node) const { return lost_now_.count(node) > 0; }
  // A node's agent said hello (again, after a loss), running `nproc` ranks
  // when it is a member.
  void Join(const std::string& node, int nproc);
  // A node's agent is gone. True when it was a member of the current
  // generation (the loss costs the generation; counted in node_losses),
  // false for a node on standby or one that never joined.
  bool Lose(const std::string& node, absl::Time at, const std::string& reason);

  // The next generation's members, as the class comment says.
  std::vector<std::string> NextMembers() const;
  // Makes `members` the current generation's, started at `now`.
  void Begin(int generation, std::vector<std::string> members, absl::Time now);

  const std::vector<std::string>& members() const { return members_; }
  bool IsMember(const std::string& node) const;
  // Connected nodes that are no members, in spec order.
  std::vector<std::string> Standby() const;
  // The job's full size: its nodes that are no spares.
  size_t full_size() const { return nodes_.size() - spares_.size(); }
  // Each member with its ranks, in rank order (for the start message).
  std::vector<GenerationMember> Placed() const;
  int node_losses() const { return node_losses_; }
  const std::vector<LostNode>& lost() const { return lost_; }
  const std::vector<GenerationRecord>& generations() const { return generations_; }
  // The nodes lost and not back, in spec order.
  std::vector<std::string> LostNow() const;

 private:
  const std::vector<std::string> nodes_;
  const std::set<std::string> spares_;
  std::map<std::string, int> nproc_;
  std::set<std::string> connected_;
  std::set<std::string> lost_now_;
  std::vector<std::string> members_;
  std::vector<LostNode> lost_;
  std::vector<GenerationRecord> generations_;
  int node_losses_ = 0;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_MEMBERSHIP_H_
