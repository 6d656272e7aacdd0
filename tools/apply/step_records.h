#ifndef FLEETPLAN_TOOLS_APPLY_STEP_RECORDS_H_
#define FLEETPLAN_TOOLS_APPLY_STEP_RECORDS_H_

// The step records of one apply: each node keeps, per phase, the hash of
// the last step that succeeded there (StepRecordPath); a step whose hash
// its node holds is skipped. Everything about them lives here: reading
// them (read ahead at once per node for the phases after the sync, so that
// an edit loop decides without a round trip each), deciding a skip, and
// writing one. A record is written through the node's file channel
// (Record), or, where a step's own command ends by recording (a sync's
// verify, a relayed fetch), by the text RecordCommand gives, or by the
// agent's session with the path and content RecordOf gives: always the
// same file with the same content.

#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "tools/apply/apply_options.h"
#include "tools/apply/node_channels.h"
#include "tools/plan/plan.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

class StepRecords {
 public:
  // All must outlive this.
  StepRecords(const ClusterSpec& spec, NodeChannels& channels, const ApplyOptions& options)
      : spec_(spec), channels_(channels), options_(options) {}

  // Reads every connected node's records of `plan`'s phases after the sync
  // at once (a batched read per node). Forgets what was read before.
  void ReadAhead(const Plan& plan) ABSL_LOCKS_EXCLUDED(mu_);

  // Whether `step`'s node records `hash` for its phase (never under
  // --force or --check, or for an empty hash).
  bool Holds(const Step& step, const std::string& hash) ABSL_LOCKS_EXCLUDED(mu_);
  // Whether every step of `phase` is recorded with its own hash; every
  // node asked at once.
  bool AllHold(const Phase& phase);

  // Writes `hash` as `step`'s record (nothing under --check, or for an
  // empty hash).
  absl::Status Record(const Step& step, const std::string& hash) ABSL_LOCKS_EXCLUDED(mu_);
  // Records every step of `phase` with its hash, every node at once; the
  // first failure names its node.
  absl::Status RecordPhase(const Phase& phase);

  // Where `step`'s record goes and what it holds; nullopt when nothing is
  // recorded (--check, an empty hash).
  struct RecordFile {
    std::string path;
    std::string content;
  };
  std::optional<RecordFile> RecordOf(const Step& step, const std::string& hash) const;
  // Shell text writing that record, for a command that ends the step
  // ("" when nothing is recorded). The step's runner calls Written once it
  // succeeded.
  std::string RecordCommand(const Step& step, const std::string& hash) const;
  // `step`'s node now holds `hash` (written by a command or a session).
  void Written(const Step& step, const std::string& hash) ABSL_LOCKS_EXCLUDED(mu_);
  // What `step`'s node holds is not known any more (its record removed).
  void Forget(const Step& step) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // What was read ahead or written since; nullopt when unknown.
  std::optional<std::string> Known(const Step& step) const ABSL_LOCKS_EXCLUDED(mu_);
  const NodeSpec& NodeOf(const Step& step) const;

  const ClusterSpec& spec_;
  NodeChannels& channels_;
  const ApplyOptions& options_;
  mutable absl::Mutex mu_;
  // node → phase name → hash ("": none). Only this apply writes them while
  // it runs.
  std::map<std::string, std::map<std::string, std::string>> known_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_STEP_RECORDS_H_
