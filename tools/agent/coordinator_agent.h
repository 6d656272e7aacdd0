#ifndef FLEETPLAN_TOOLS_AGENT_COORDINATOR_AGENT_H_
#define FLEETPLAN_TOOLS_AGENT_COORDINATOR_AGENT_H_

// The chief's agent: it runs the chief's ranks like any node's
// (node_part.h) and coordinates the job. It listens on the supervisor port
// when the job has other nodes, takes in their agents once they proved the
// job's key and said hello, hears what their ranks did, and carries out
// what the job's decisions (job_coordinator.h) order: start, stop, collect
// stacks, end.

#include <memory>
#include <string>
#include <vector>

#include "tools/agent/job_coordinator.h"
#include "tools/agent/node_part.h"
#include "tools/agent/sockets.h"
#include "tools/secure/tls_channel.h"

namespace fleetplan {

class CoordinatorAgent : public NodePart {
 public:
  explicit CoordinatorAgent(const NodeAgentOptions& options) : NodePart(options) {}

 protected:
  absl::Status SetUp(absl::Time now) override;
  std::vector<PeerChannel*> Channels() override;
  int ListenFd() const override { return listener_.get(); }
  void Accept(absl::Time now) override;
  void Handle(PeerChannel& channel, const PeerMessage& message) override;
  void StopAsked() override { job_->StopRequested(); }
  void RanksStarted(int generation) override;
  void RanksEnded(const std::map<int, int>& statuses, const std::map<int, int>& failed,
                  const std::optional<RankError>& error) override;
  void RanksProgressed(absl::Time now) override;
  void StacksCollected(int generation, std::vector<RankStack> ranks) override;
  void CheckPeers(absl::Time now) override;
  void Decide(absl::Time now) override;

 private:
  // Says why a connection was refused, without letting a flood of them
  // fill the agent's log: the first few, then every hundredth.
  void NoteRefused(const std::string& why);
  void Hello(PeerChannel& channel, const HelloMessage& hello);
  // The job's membership into job.json (what `status` shows).
  void KeepMembership();
  // Drops a worker that never proved the job's key; says a lost one.
  // False when `worker` goes.
  bool Keep(PeerChannel& worker, absl::Time now, absl::Time* least_recent);
  void Carry(const JobCoordinator::Order& order);

  std::unique_ptr<JobCoordinator> job_;
  Fd listener_;
  std::vector<std::unique_ptr<PeerChannel>> workers_;
  // This side's TLS settings, with the job's key (supervision purpose).
  std::shared_ptr<TlsEndpoint> endpoint_;
  size_t refused_ = 0;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_COORDINATOR_AGENT_H_
