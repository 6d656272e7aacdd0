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
// An elastic job (min_nodes below its full size, or spares) survives
// losing nodes: a member lost (or out of reach when the first generation
// starts) stops the generation, and the next one runs on the members left,
// a spare in each lost node's place (membership.h), while at least
// min_nodes remain and the losses stay within max_node_losses; else the
// job fails naming the lost nodes. Losses and rank failures are counted
// apart: a generation that lost a member costs no restart (its ranks'
// failures follow from the loss) and no backoff (the next starts once the
// members' ranks ended), one that did not uses `max_restarts`.
// A lost node whose agent says hello again waits on standby: with
// rejoin_at_once, a job below its full size stops the generation at once
// to grow back; else it joins at the next restart, and at full size it is
// a spare. The chief's node holds the coordinator: it is never lost.
// TORCHELASTIC_RESTART_COUNT is the generation, whatever started it.
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
#include "tools/agent/membership.h"
#include "tools/protocol/job_state.h"
#include "tools/protocol/stack_report.h"
#include "tools/protocol/supervision.h"

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
    // An elastic job's policy as the launch carried it (spares among
    // `nodes`, never the first).
    ElasticPolicy elastic;
  };

  // Sent to every node.
  struct Order {
    enum class Kind { kStart, kStop, kEnd, kCollectStacks };
    Kind kind = Kind::kStart;
    int generation = 0;
  };

  JobCoordinator(Options options, absl::Time now);

  // A node's agent connected, with `nproc` ranks to run (the coordinator's
  // own node joins itself); again after it was lost: it rejoins.
  void Joined(const std::string& node, int nproc = 1);
  // True for a node of the job that is not connected now: one that never
  // joined, or was lost. A node still counted as connected may not join.
  bool MayJoin(const std::string& node) const;
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
  // A node's agent is gone at `now`: its connection closed or it fell silent.
  void Lost(const std::string& node, const std::string& reason, absl::Time now);
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
  // Why the latest generation started (a failure, a loss, a node back);
  // empty for the first.
  const std::string& restart_reason() const { return counts_.why; }
  // Who runs this generation, who is on standby, who was lost.
  const Membership& membership() const { return membership_; }
  // True for a job that survives losing nodes (spares, or min_nodes below
  // its full size).
  bool Elastic() const;
  // Restarts used by rank failures (node losses use none).
  int restarts_used() const { return counts_.restarts_used; }

 private:
  enum class Stage { kJoining, kRunning, kCollecting, kStopping, kBackoff, kEnded };

  void BeginStopping(std::vector<Order>* orders);
  void PollJoining(absl::Time now, std::vector<Order>* orders);
  void PollStopping(absl::Time now, std::vector<Order>* orders);
  // True when the job may run a generation on `next` (min_nodes,
  // max_node_losses); else false, the failure naming the nodes lost.
  bool MayRunOn(const std::vector<std::string>& next);
  // The next generation on the members left, or the job's failed end.
  void StartNext(absl::Time now, std::vector<Order>* orders);
  void StartGeneration(absl::Time now, std::vector<Order>* orders);
  int MinNodes() const;
  void PollRunning(absl::Time now, std::vector<Order>* orders);
  void PollCollecting(absl::Time now, std::vector<Order>* orders);
  void End(JobPhase phase, std::vector<Order>* orders);
  // Every member of this generation is in `nodes`.
  bool AllNodesIn(const std::set<std::string>& nodes) const;
  // A node on standby and the job below its full size: grow back now.
  bool ShouldGrow() const;

  const Options options_;
  const absl::Time joining_since_;
  Stage stage_ = Stage::kJoining;
  int generation_ = 0;
  Membership membership_;
  // The members of this generation.
  struct GenerationNodes {
    std::set<std::string> started;
    std::set<std::string> ended;  // lost nodes included
    std::set<std::string> succeeded;
    bool failed = false;       // a rank failed (or the job hung)
    bool lost_member = false;  // a member was lost: the next one runs without it
    bool grow = false;         // a node came back: the next one runs with it
  };
  GenerationNodes this_generation_;
  // What was used of the budgets, and why the latest generation started.
  struct Counts {
    int restarts_used = 0;
    std::string why;
  };
  Counts counts_;
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
