#ifndef FLEETPLAN_TOOLS_AGENT_NODE_PART_H_
#define FLEETPLAN_TOOLS_AGENT_NODE_PART_H_

// What every node's agent does for its part of a job, whether it
// coordinates the job or works in it: its ranks (rank_group.h), one
// generation at a time, their progress and stacks (hang_watch.h), a stop
// asked for on this node, job.json, and the one poll loop over ranks'
// output, signals, stdin and the peers' channels. The two roles say what
// happens with the peers: the coordinator decides (coordinator_agent.h), a
// worker reports to it and obeys (worker_agent.h).

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/agent/hang_watch.h"
#include "tools/agent/node_agent.h"
#include "tools/agent/peer_channel.h"
#include "tools/agent/rank_group.h"
#include "tools/protocol/job_state.h"
#include "tools/protocol/peer_message.h"

namespace fleetplan {

// How long the last orders get to leave before the coordinator exits, and
// how long a stopped worker waits for the coordinator's word.
inline constexpr absl::Duration kLastWords = absl::Seconds(2);

// Creates LOG_DIR/<run_id> and points LOG_DIR/latest at it (replaced
// atomically, relative so the folder can move). Returns the run folder.
absl::StatusOr<std::string> CreateRunDir(const std::string& log_dir, const std::string& run_id);

class NodePart {
 public:
  explicit NodePart(const NodeAgentOptions& options);
  virtual ~NodePart() = default;

  // Runs this node's part to the job's end: the final state.
  absl::StatusOr<NodeJobState> Run();

 protected:
  // The role's part. SetUp before the loop; an error ends the agent.
  virtual absl::Status SetUp(absl::Time now) = 0;
  // The peers' channels, and the listening socket (-1: none) with what to
  // do when it is readable.
  virtual std::vector<PeerChannel*> Channels() = 0;
  virtual int ListenFd() const { return -1; }
  virtual void Accept(absl::Time) {}
  // A message from a peer (never a heartbeat).
  virtual void Handle(PeerChannel& channel, const PeerMessage& message) = 0;
  // A stop was asked for on this node.
  virtual void StopAsked() = 0;
  // What this node's ranks did: started, ended (`failed`: by themselves;
  // `error`: what the lowest of them said), progressed, their stacks.
  virtual void RanksStarted(int generation) = 0;
  virtual void RanksEnded(const std::map<int, int>& statuses, const std::map<int, int>& failed,
                          const std::optional<RankError>& error) = 0;
  virtual void RanksProgressed(absl::Time now) = 0;
  virtual void StacksCollected(int generation, std::vector<RankStack> ranks) = 0;
  // Once a turn: the peers' health, then what follows from it.
  virtual void CheckPeers(absl::Time now) = 0;
  virtual void Decide(absl::Time now) = 0;

  // What every role does.
  void Say(const std::string& text);
  void RequestStop(const std::string& why);
  // Starts this node's ranks of `generation`, placed among `members`
  // (empty: as env.sh places them); a node that is none of them runs none
  // and waits as a spare.
  void StartGeneration(int generation, const std::string& why,
                       const std::vector<GenerationMember>& members);
  void CollectStacks(int generation);
  // Stops this node's ranks of the generation and reports their end, once.
  void StopLocalRanks();
  void Finish(JobPhase phase, std::optional<JobFailure> failure, int exit_status);
  void WriteState(absl::Time now);
  void MarkDirty() { dirty_ = true; }
  bool stop_requested() const { return stop_requested_at_.has_value(); }

  const NodeAgentOptions& options_;
  const AgentLaunch& request_;  // options_.request
  NodeJobState state_;
  std::string run_dir_;
  std::optional<absl::Time> stop_requested_at_;
  bool done_ = false;

 private:
  // One turn of the loop: wait for output, signals or messages, then act.
  void Step();
  // The descriptors of `watch` that are readable at `now`.
  void HandleReady(const std::vector<int>& watch, const std::vector<size_t>& ready,
                   absl::Time now);
  void Heartbeat(absl::Time now);
  void DrainStopFd();
  void ReadStdin();
  // Local ranks that failed or all succeeded: stop the rest and report.
  void CheckRanks();
  // Progress of this node's ranks, and stacks collected, go to the role.
  void WatchForHangs(absl::Time now);
  // The rank group of `generation`, at `first_rank` (and `place`).
  RankGroupOptions GroupOptions(int generation, const std::string& why, int first_rank,
                                std::optional<NodePlace> place) const;
  // No rank of this node runs in `generation`: it waits as a spare.
  void WaitAsSpare(int generation);
  void TellStarted();

  absl::Time next_heartbeat_ = absl::InfinitePast();
  std::unique_ptr<RankGroup> ranks_;
  HangWatch hang_;
  bool reported_ = false;  // this generation's end was reported
  bool stdin_closed_ = false;
  bool told_started_ = false;
  bool dirty_ = false;
  bool write_error_said_ = false;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_NODE_PART_H_
