#include "tools/apply/sync_steps.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/protocol/node_layout.h"
#include "tools/util/human_units.h"

namespace fleetplan {

ApplyResult SyncSteps::RunPhase(const Phase& phase, const std::vector<ExtraFile>& extras) {
  std::vector<ExtraFile> files = extras;
  if (!context_.options.agent_path.empty()) {
    files.push_back({context_.options.agent_path, BinRelativePath(kAgentFileName)});
  }
  manifest_ = source_;
  if (absl::Status added = AddExtraFiles(files, &manifest_); !added.ok()) {
    return {kExitApplyFailed, absl::StrCat("sync: ", added.message())};
  }
  std::vector<const Step*> steps;
  for (const Step& step : phase.steps) steps.push_back(&step);
  absl::Time start = absl::Now();
  RunAll(steps);
  std::vector<SyncTraffic> traffic;
  {
    absl::MutexLock lock(&mu_);
    traffic.swap(traffic_);
  }
  if (!traffic.empty()) context_.reporter.SyncReported(traffic, absl::Now() - start);
  if (context_.state.failed()) return {kExitApplyFailed, context_.state.failure()};
  return {};
}

StepOutcome SyncSteps::Run(const Step& step) {
  // SyncTree is incremental by itself, and built binaries are not in the
  // step's hash, so it always runs.
  // (ValidateNodes has refused a workdir inside the source already.)
  const NodeSpec& node = *context_.FindNode(step.node);
  // Without [sync], no agent to ship (tests) and nothing built: nothing.
  if (manifest_.entries.empty() && !SyncsSource(step)) return StepOutcome::Unchanged();
  absl::Time start = absl::Now();
  bool relayed = !relay_from_.empty() && node.name != context_.spec.chief().name;
  StepOutcome outcome = relayed ? Relay(step, node) : Direct(step, node);
  if (outcome.status == StepStatus::kFailed) return outcome;
  absl::Status recorded =
      outcome.recorded ? absl::OkStatus() : context_.records.Record(step, step.hash);
  if (!recorded.ok()) {
    return StepOutcome::Failed(absl::StrCat("node '", node.name, "': ", recorded.message()));
  }
  if (outcome.status == StepStatus::kChanged) {
    // The outcome's traffic; the node's elapsed time is known only here.
    absl::MutexLock lock(&mu_);
    for (SyncTraffic& traffic : traffic_) {
      if (traffic.node == node.name) traffic.elapsed = absl::Now() - start;
    }
  }
  return outcome;
}

SyncOptions SyncSteps::DirectOptions(const Step& step, const NodeSpec& node,
                                     StepOutcome* workdir) {
  const ApplyOptions& options = context_.options;
  SyncOptions sync;
  sync.ignore_recorded = options.force;
  if (auto it = recorded_.find(node.name); it != recorded_.end()) sync.recorded = &it->second;
  // Before anything is sent: is the workdir there, writable, with room?
  sync.before_send = [this, &step, &node, workdir](uint64_t bytes) {
    *workdir = checks_.Workdir(step, node, bytes);
    return workdir->status == StepStatus::kFailed
               ? absl::FailedPreconditionError(workdir->failure)
               : absl::OkStatus();
  };
  // The agent arrives with this sync; it checks what did, and records.
  if (!options.agent_path.empty()) sync.verifier = AgentPath(node);
  sync.after_verify = context_.records.RecordCommand(step, step.hash);
  if (AgentSessionConnection* session = context_.channels.SessionOf(node.name);
      session != nullptr) {
    // The check and the record inside the agent.
    std::optional<StepRecords::RecordFile> record = context_.records.RecordOf(step, step.hash);
    sync.verify_on_node = [session, &node, record, timeout = options.step_timeout](
                              std::string* output) {
      return session->VerifyTree(node.workdir, SyncManifestPath(node),
                                 record.has_value() ? record->path : "",
                                 record.has_value() ? record->content : "", timeout, output);
    };
  }
  sync.cancel = context_.channels.CancelFor(node.name);
  sync.verify_timeout = options.step_timeout;
  return sync;
}

StepOutcome SyncSteps::Direct(const Step& step, const NodeSpec& node) {
  StepOutcome workdir;
  SyncOptions sync = DirectOptions(step, node, &workdir);
  absl::StatusOr<SyncResult> result = SyncTree(context_.channels.Of(node.name), manifest_,
                                               node.workdir, SyncManifestPath(node), sync);
  if (workdir.status == StepStatus::kFailed) return workdir;
  if (!result.ok()) {
    return StepOutcome::Failed(absl::StrCat("node '", node.name, "', phase sync: ",
                                            result.status().message()));
  }
  StepOutcome outcome;
  outcome.status = result->changed() ? StepStatus::kChanged : StepStatus::kUnchanged;
  // The verifier ran (after any change, or everything sent) and recorded.
  outcome.recorded = !sync.verifier.empty() && !sync.after_verify.empty() &&
                     (result->changed() || sync.ignore_recorded);
  if (!result->changed()) return outcome;
  NoteSynced(*result);
  outcome.detail = absl::StrCat(result->files_sent, " sent (", FormatBytes(result->bytes_sent), "), ",
                                result->files_removed, " removed; ",
                                FormatBytes(result->bytes_from_here), " from this machine");
  if (result->bytes_from_here < result->bytes_sent) {
    absl::StrAppend(&outcome.detail, " (shared workdir: ",
                    FormatBytes(result->bytes_sent - result->bytes_from_here),
                    " put there by another node's sync)");
  }
  NoteTraffic({node.name, "direct", result->bytes_sent, result->bytes_from_here});
  return outcome;
}

void SyncSteps::NoteSynced(const SyncResult& changes) {
  // The program as the launch finds it under the workdir ("./train.sh").
  std::string program = context_.spec.job.program;
  while (absl::StartsWith(program, "./")) program.erase(0, 2);
  bool checked = changes.extras_changed;
  for (const std::string& path : changes.changed_paths) checked |= path == program;
  if (checked) context_.state.NoteCheckedInputsChanged();
}

void SyncSteps::NoteTraffic(SyncTraffic traffic) {
  absl::MutexLock lock(&mu_);
  traffic_.push_back(std::move(traffic));
}

}  // namespace fleetplan
