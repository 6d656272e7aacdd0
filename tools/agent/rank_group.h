#ifndef FLEETPLAN_TOOLS_AGENT_RANK_GROUP_H_
#define FLEETPLAN_TOOLS_AGENT_RANK_GROUP_H_

// One generation of a node's ranks: started together, their output kept
// in per-rank logs (and, when asked, written prefixed `[node/rank]` to an
// output descriptor), watched until all succeed or one fails, and stopped
// together. Each rank leads its own process group, so stopping a rank
// stops everything it started.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "tools/agent/line_prefixer.h"
#include "tools/agent/memory_cgroup.h"
#include "tools/agent/redactor.h"
#include "tools/agent/step_progress.h"
#include "tools/process/subprocess.h"
#include "tools/protocol/job_state.h"
#include "tools/protocol/launcher_contract.h"
#include "tools/protocol/node_layout.h"
#include "tools/protocol/rank_error.h"

namespace fleetplan {

struct RankGroupOptions {
  std::string node;
  int first_rank = 0;
  int nproc = 1;
  std::vector<std::string> program;  // the job's argv, before the launcher's argument
  // Each rank gets its part of this launcher's contract (RANK, LOCAL_RANK,
  // ...; launcher_contract.h ForRank) for the generation below.
  LauncherConfig launcher;
  std::string run_id;
  // Where the node stands in this generation (an elastic job's members):
  // its node-wide contract (WORLD_SIZE, GROUP_RANK, ...; GenerationContract
  // in launcher_contract.h) overrides env.sh's. nullopt: env.sh's holds.
  std::optional<NodePlace> place;
  std::string run_dir;  // rank logs go here (RankLogPath)
  // >0: each log first gets "--- restart N of M (why) ---".
  int generation = 0;
  int max_restarts = 0;
  std::string restart_reason;  // e.g. "rank 3 on node 'b' failed with exit status 1"
  int output_fd = -1;   // prefixed output goes here too; -1: logs only
  absl::Duration grace_period = absl::Seconds(10);  // SIGTERM → SIGKILL
  // The spec's [job] progress pattern: with the trainer's metric lines,
  // which lines report a rank's step (recorded for `top` in the run
  // folder's progress.json, step_progress.h). Empty: metric lines only.
  std::string progress_pattern;
  // What no log or output may show: the values of the secrets env.sh gave
  // this agent (kSecretNamesVar), each written "***" instead.
  std::vector<std::string> secret_values = SecretValuesFromEnvironment(kSecretNamesVar);
  // Secrets env.sh names that this agent's environment lacks (the node's
  // secrets file is gone): no rank starts without them.
  std::vector<std::string> missing_secrets = MissingSecrets(kSecretNamesVar);
  // Where the kernel's record of the ranks' memory is read (memory_cgroup.h).
  KernelPaths kernel_paths;
};

class RankGroup {
 public:
  enum class Progress { kRunning, kSucceeded, kFailed };

  explicit RankGroup(RankGroupOptions options);
  ~RankGroup();

  // Starts every rank; one that cannot start counts as failed with 127.
  void Start();
  // Waits up to `timeout` (less while a rank is exiting) for output or for
  // one of `watch` to be readable; returns the indexes (into `watch`) of
  // those that are.
  std::vector<size_t> Pump(absl::Span<const int> watch, absl::Duration timeout);
  // Reaps what ended: kFailed once a rank failed, kSucceeded once all
  // exited 0 and their output is drained.
  Progress Check();
  // Stops every rank still running (SIGTERM, then SIGKILL after the grace
  // period) and drains their output. Blocks until all are reaped.
  void StopAll();

  // Every rank's exit status (once all ended).
  std::map<int, int> statuses() const;
  // The ranks that failed by themselves, before any were stopped.
  const std::map<int, int>& failed() const { return failed_; }
  // Rank, pid and status of each, for job.json.
  std::vector<RankState> states() const;
  // How many bytes each rank (in the order of states()) has written so far.
  std::vector<uint64_t> output_bytes() const;
  // What rank `rank` (one of this node's) said of its failure: its error
  // file, else its log's last lines (rank_failure.h); and how it ended
  // (RankDeath: its signal, its peak RSS, the OOM killer's count).
  RankError Explain(int rank) const;

 private:
  int Rank(size_t i) const { return options_.first_rank + static_cast<int>(i); }
  void Message(const std::string& text);
  // Sets up the steps' record (a bad pattern is said, and metric lines
  // alone count).
  void StartProgress();
  void Log(size_t i, absl::string_view chunk);
  IndexedOutput Forwarder();
  std::vector<Subprocess*> Running();

  const RankGroupOptions options_;
  std::vector<std::unique_ptr<Subprocess>> ranks_;  // null: did not start
  std::vector<OomWatch> oom_watches_;               // each rank's, from its start
  std::vector<LinePrefixer> prefixers_;
  std::vector<Redactor> redactors_;
  // Writes rank `i`'s output (already redacted) to its log and prefixed
  // to the output descriptor.
  void Write(size_t i, absl::string_view chunk);
  std::vector<int> logs_;
  std::vector<uint64_t> output_bytes_;
  std::vector<size_t> started_index_;
  std::unique_ptr<StepProgress> progress_;
  std::map<int, int> failed_;
  absl::Time all_exited_at_ = absl::InfiniteFuture();
  bool stopped_ = false;
};

// The line each rank's log gets before a later generation: "--- restart
// 2 of 3 (why) ---", or for an elastic job (a place among the generation's
// members) "--- generation 2 on 3 nodes (why) ---".
std::string GenerationHeader(const RankGroupOptions& options);

// "[node] agent: text" and a newline on `fd` (-1: nowhere): what the agent
// itself says, beside its ranks' prefixed lines.
void AgentMessage(int fd, absl::string_view node, absl::string_view text);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_RANK_GROUP_H_
