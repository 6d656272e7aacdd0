#ifndef FLEETPLAN_TOOLS_AGENT_WORKER_AGENT_H_
#define FLEETPLAN_TOOLS_AGENT_WORKER_AGENT_H_

// Every other node's agent: it runs the node's ranks (node_part.h) as the
// coordinator orders, over one channel to it (TLS with the job's key),
// and tells it what the ranks did. A coordinator silent (or disconnected)
// for the heartbeat timeout stops this node's ranks and ends its part; in
// an elastic job (rejoin_window) the agent then tries to reach the
// coordinator again and say hello, to rejoin the job at a later
// generation, and ends only once the window passed. A stop asked for here
// stops the ranks at once and tells the coordinator, which stops the rest.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tools/agent/node_part.h"
#include "tools/secure/tls_channel.h"

namespace fleetplan {

class WorkerAgent : public NodePart {
 public:
  explicit WorkerAgent(const NodeAgentOptions& options) : NodePart(options) {}

 protected:
  absl::Status SetUp(absl::Time now) override;
  std::vector<PeerChannel*> Channels() override;
  void Handle(PeerChannel& channel, const PeerMessage& message) override;
  void StopAsked() override;
  void RanksStarted(int generation) override;
  void RanksEnded(const std::map<int, int>& statuses, const std::map<int, int>& failed,
                  const std::optional<RankError>& error) override;
  void RanksProgressed(absl::Time now) override;
  void StacksCollected(int generation, std::vector<RankStack> ranks) override;
  void CheckPeers(absl::Time now) override;
  void Decide(absl::Time now) override;

 private:
  // Connects and proves the job's key both ways, retrying until `deadline`
  // (the coordinator may not listen yet, or something else may hold the
  // port for a moment).
  absl::Status ConnectToCoordinator(absl::Time deadline);
  void Welcome(const WelcomeMessage& welcome);
  // Sends `message` to the coordinator while connected.
  void Tell(const PeerMessage& message);
  // Ends this node's part: the coordinator was lost (`lost`: how).
  void FailLost(const std::string& lost);
  // Reconnects and says hello again, while the rejoin window lasts.
  void TryRejoin(absl::Time now);

  std::unique_ptr<PeerChannel> coordinator_;
  std::string coordinator_node_;
  // Rejoining: until when, how the coordinator was lost, the next attempt.
  std::optional<absl::Time> rejoin_until_;
  std::string lost_why_;
  absl::Time next_attempt_ = absl::InfinitePast();
  // This side's TLS settings, with the job's key (supervision purpose).
  std::shared_ptr<TlsEndpoint> endpoint_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_WORKER_AGENT_H_
