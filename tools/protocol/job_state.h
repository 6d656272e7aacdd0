#ifndef FLEETPLAN_TOOLS_PROTOCOL_JOB_STATE_H_
#define FLEETPLAN_TOOLS_PROTOCOL_JOB_STATE_H_

// A job's state as each node's launch agent keeps it, in
// <workdir>/.fleetplan/nodes/<node>/logs/job.json: written by the agent on
// every change and every heartbeat, read back through the transports by
// apply, status, logs and stop. One schema, one parser, for both sides.
//
// Beside it, per run: logs/<run-id>/rank-<RANK>.log (each rank's output, a
// "--- restart N ---" line before each later generation),
// logs/<run-id>/rank-<RANK>.error-<GEN>.json (the exception a rank's script
// recorded in generation GEN, 0600), logs/latest ->
// <run-id>, and logs/agent.log (what a detached agent itself said).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json_fwd.hpp"
#include "tools/protocol/rank_error.h"
#include "tools/protocol/stack_report.h"

namespace fleetplan {

// The life of a job, and of each node's part in it.
enum class JobPhase { kStarting, kRunning, kSucceeded, kFailed, kStopped };

// "starting", "running", "succeeded", "failed", "stopped".
absl::string_view JobPhaseName(JobPhase phase);
std::optional<JobPhase> ParseJobPhase(absl::string_view name);
// Succeeded, failed or stopped: nothing of the job runs any more.
bool IsFinal(JobPhase phase);

// One rank of the node, in its current generation.
struct RankState {
  int rank = 0;
  int pid = 0;                // 0: not started (yet)
  std::optional<int> status;  // exit status once it ended
};

// Why a job failed: the first rank that failed by itself, a node lost, or
// the job hung.
struct JobFailure {
  std::string node;  // empty for the whole job (it hung)
  int rank = -1;    // -1: no rank failed (a node was lost, the job hung)
  int status = 1;   // the job's exit status
  std::string reason;  // e.g. "no heartbeat for 30s"; empty for a rank
  // What the failed rank said of it, read on its node (rank_error.h).
  std::optional<RankError> error;
  // A hung job: where every rank stood (stack_report.h).
  std::optional<StackSummary> stacks;
};

// "rank 3 on node 'b' failed with exit status 1", how a signal ended it
// (": killed by SIGKILL (signal 9); the kernel's OOM killer ended it: peak
// RSS 63.9 MiB of a 64.0 MiB limit") and, where its script recorded one,
// ": ValueError: bad shard 7 (at train.py:12 in load)"; with
// no rank, "node 'b' failed: <reason>"; a hung job, "the job hung:
// <reason>". One line: a log tail and stacks are apart.
std::string DescribeFailure(const JobFailure& failure);

// DescribeFailure and, where the rank recorded no exception, its last lines
// below, or a hung job's stacks (SummaryLines), each indented by two
// spaces: what apply and status show.
std::string DescribeFailureInFull(const JobFailure& failure);

// A failure as job.json and the agents' end message carry it:
// {node, rank, status, reason, error} (error: RankErrorToJson or null),
// and "stacks" (StackSummaryToJson) for a hung job.
nlohmann::json JobFailureToJson(const JobFailure& failure);
// InvalidArgument naming `document` and the field that is missing or wrong
// (a rank below -1, a status outside 0..255).
absl::StatusOr<JobFailure> JobFailureFromJson(const nlohmann::json& json,
                                              absl::string_view document);

// A generation of the job, as the coordinator started it: its members, in
// rank order.
struct GenerationRecord {
  int generation = 0;
  absl::Time started_at = absl::InfinitePast();
  std::vector<std::string> members;
};

// A node the job lost (its agent silent past the heartbeat timeout, its
// connection closed, or out of reach at a generation's start).
struct LostNode {
  std::string node;
  absl::Time at = absl::InfinitePast();
  std::string reason;  // "no heartbeat for 10s"
};

// How many generations job.json keeps: the latest ones.
inline constexpr size_t kGenerationsKept = 20;

struct NodeJobState {
  std::string run_id;
  std::string node;
  bool coordinator = false;  // this node's agent coordinates the job
  int agent_pid = 0;
  int generation = 0;    // 0, then 1, 2, ... after whole-job restarts
  int max_restarts = 0;
  JobPhase phase = JobPhase::kStarting;
  absl::Time started_at = absl::InfinitePast();
  absl::Time ended_at = absl::InfinitePast();  // InfinitePast while running
  // When this agent last heard its peer (a worker: the coordinator; the
  // coordinator: the worker heard least recently), and how long silence
  // may last before the job stops.
  absl::Time last_heartbeat = absl::InfinitePast();
  absl::Time updated_at = absl::InfinitePast();  // when the agent last wrote this
  absl::Duration heartbeat_timeout = absl::Seconds(30);
  std::vector<RankState> ranks;
  // Once the job failed: why (the same on every node that heard the end).
  std::optional<JobFailure> failure;
  int exit_status = 0;  // the job's, once it ended
  // The job's membership, as the coordinator keeps it (what `status`
  // shows; empty on the workers): the latest generations (kGenerationsKept),
  // every node lost (a node that rejoined stays listed), the spares in
  // reserve, and the losses counted against [job] max_node_losses.
  std::vector<GenerationRecord> generations;
  std::vector<LostNode> lost;
  std::vector<std::string> spares;
  int node_losses = 0;
  // Restarts used by failures (a generation that lost a node uses none);
  // what agents before elastic jobs wrote: the generation.
  int restarts_used = 0;
  // Why this node runs no rank now, though the job runs: "spare" (in
  // reserve, or no member of this generation), "rejoining" (it lost the
  // coordinator and tries to reach it again); empty otherwise.
  std::string waiting;
};

// Pretty-printed JSON, ending in a newline.
std::string JobStateToJson(const NodeJobState& state);
// The membership's part of it: "generations" ({generation, started_at,
// members}), "lost" ({node, at, reason}), "spares", "node_losses",
// "restarts_used", "waiting".
nlohmann::json MembershipToJson(const NodeJobState& state);
// InvalidArgument naming the field that is missing or wrong.
absl::StatusOr<NodeJobState> JobStateFromJson(absl::string_view json);

// The job's state as seen at `now`: a state file that says starting or
// running but whose agent has not written it (updated_at) for two
// heartbeat timeouts
// belongs to an agent that died without a word (SIGKILL, a node reboot).
bool IsStale(const NodeJobState& state, absl::Time now);

// Where the files above live, under the agent's --log-dir.
std::string JobStatePath(absl::string_view log_dir);
std::string RunDir(absl::string_view log_dir, absl::string_view run_id);
std::string RankLogPath(absl::string_view run_dir, int rank);
// <run_dir>/rank-<RANK>.error-<GENERATION>.json: where the rank's
// TORCHELASTIC_ERROR_FILE points (tools/protocol/rank_error.h).
std::string RankErrorPath(absl::string_view run_dir, int rank, int generation);
std::string AgentLogPath(absl::string_view log_dir);

// "20250102T030405Z-1234": UTC time and a number (the pid of the process
// that made it), sorted by time; the same on every node of one run.
std::string MakeRunId(absl::Time now, int pid);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_JOB_STATE_H_
