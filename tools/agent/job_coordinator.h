#ifndef FLEETPLAN_TOOLS_AGENT_JOB_COORDINATOR_H_
#define FLEETPLAN_TOOLS_AGENT_JOB_COORDINATOR_H_

// What the job's coordinator (the chief's launch agent) decides, apart from
// sockets and processes so that every path is a plain unit test. It hears
// events from the nodes' agents (its own included) and answers with orders
// sent to every node:
//
//   joining ──all joined──▶ running(g) ──a rank failed / node lost / stop──▶ stopping(g)
//      │                       │ every rank succeeded                          │ all nodes' ranks ended
//      ▼ join timeout          ▼                                               ▼
//   ended(failed)          ended(succeeded)       restarts left: backoff ──▶ running(g+1)
//                                                 else: ended(failed | stopped)
//
// Restarts are of the whole job: every rank on every node stops, then all
// start again as the next generation, so no rank waits on a dead peer.
//
// With a hang timeout, running(g) with no rank progressing on any node for
// that long turns into collecting(g): every node is asked for its ranks'
// stacks, and once all answered (or the collect timeout passed, the
// silent nodes named), the job fails with 124 and the grouped stacks, then
// stops(g) as for any failure: a restart if restarts are left.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/protocol/job_state.h"
#include "tools/protocol/stack_report.h"

namespace fleetplan {

class JobCoordinator {
 public:
  struct Options {
    std::vector<std::string> nodes;  // every node of the job, the coordinator's own included
    int max_restarts = 0;
    absl::Duration join_timeout = absl::Seconds(30);  // for every agent to connect
    absl::Duration restart_backoff = absl::Seconds(1);
    // No progress on any node this long: the generation hung. Zero: off.
    absl::Duration hang_timeout = absl::ZeroDuration();
    // How long nodes get to report their ranks' stacks.
    absl::Duration collect_timeout = absl::Seconds(60);
  };

  // Sent to every node.
  struct Order {
    enum class Kind { kStart, kStop, kEnd, kCollectStacks };
    Kind kind = Kind::kStart;
    int generation = 0;
  };

  JobCoordinator(Options options, absl::Time now);

  // A node's agent connected (the coordinator's own node joins itself).
  void Joined(const std::string& node);
  bool HasJoined(const std::string& node) const { return joined_.count(node) > 0; }
  // Every rank of `node` has started in `generation`.
  void Started(const std::string& node, int generation);
  // Every rank of `node` ended in `generation`: `statuses` for all of them,
  // `failed` for those that failed by themselves (not stopped by an order),
  // `error` what the first of `failed` said of it.
  void RanksEnded(const std::string& node, int generation, const std::map<int, int>& statuses,
                  const std::map<int, int>& failed,
                  const std::optional<RankError>& error = std::nullopt);
  // A rank of `node` progressed in `generation` (hang_timeout).
  void Progressed(const std::string& node, int generation, absl::Time now);
  // Where the ranks of `node` stood, asked for by kCollectStacks.
  void StacksReported(const std::string& node, int generation,
                      const std::vector<RankStack>& ranks);
  // A node's agent is gone: its connection closed or it fell silent.
  void Lost(const std::string& node, const std::string& reason);
  // A stop was asked for (a signal on any node: `stop`, Ctrl-C in apply).
  void StopRequested();

  // The orders that follow from the events so far and the time; call after
  // each event and periodically.
  std::vector<Order> Poll(absl::Time now);

  // The job's state: starting (joining or first start), running, or final.
  JobPhase phase() const;
  int generation() const { return generation_; }
  const std::optional<JobFailure>& failure() const { return failure_; }
  // 0 when succeeded; the failing rank's status (1 for a lost node) when
  // failed; 143 (SIGTERM) when stopped.
  int exit_status() const;
  bool ended() const { return stage_ == Stage::kEnded; }

 private:
  enum class Stage { kJoining, kRunning, kCollecting, kStopping, kBackoff, kEnded };

  void BeginStopping(std::vector<Order>* orders);
  void StartGeneration(absl::Time now, std::vector<Order>* orders);
  void PollRunning(absl::Time now, std::vector<Order>* orders);
  void PollCollecting(absl::Time now, std::vector<Order>* orders);
  void End(JobPhase phase, std::vector<Order>* orders);
  bool AllNodesIn(const std::set<std::string>& nodes) const;

  const Options options_;
  const absl::Time joining_since_;
  Stage stage_ = Stage::kJoining;
  int generation_ = 0;
  std::set<std::string> joined_;
  // The nodes of this generation.
  struct GenerationNodes {
    std::set<std::string> started;
    std::set<std::string> ended;  // lost nodes included
    std::set<std::string> succeeded;
    bool failed = false;  // a rank failed or a node was lost
  };
  GenerationNodes this_generation_;
  std::set<std::string> lost_;
  bool stop_requested_ = false;
  absl::Time backoff_until_ = absl::InfinitePast();
  std::optional<JobFailure> failure_;
  JobPhase final_phase_ = JobPhase::kStarting;
  bool everyone_started_once_ = false;
  // Hang detection, in this generation.
  struct HangCheck {
    absl::Time last_progress = absl::InfinitePast();
    absl::Time collect_until = absl::InfinitePast();
    std::set<std::string> reported;  // nodes that sent their stacks
    std::vector<RankStack> stacks;
  };
  HangCheck hang_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_JOB_COORDINATOR_H_
