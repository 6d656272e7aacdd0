#include "tools/apply/step_records.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tools/apply/parallel_for.h"
#include "tools/protocol/node_layout.h"
#include "tools/util/path_policy.h"
#include "tools/util/shell_quote.h"

namespace fleetplan {

const NodeSpec& StepRecords::NodeOf(const Step& step) const {
  if (const NodeSpec* node = spec_.FindNode(step.node); node != nullptr) return *node;
  // The executor runs no step of a node the spec does not list.
  return spec_.chief();
}

void StepRecords::ReadAhead(const Plan& plan) {
  {
    absl::MutexLock lock(&mu_);
    known_.clear();
  }
  if (options_.force || options_.check_only) return;
  // The phases after the sync whose steps are skipped on their record.
  std::vector<std::string> phases;
  for (PhaseKind kind : {PhaseKind::kEnvironment, PhaseKind::kPreflight, PhaseKind::kLaunch}) {
    if (FindPhase(plan, kind) != nullptr) phases.emplace_back(PhaseName(kind));
  }
  if (phases.empty()) return;
  std::vector<const NodeSpec*> nodes;
  for (const NodeSpec& node : spec_.nodes) {
    if (channels_.Has(node.name)) nodes.push_back(&node);
  }
  std::vector<std::vector<absl::StatusOr<std::string>>> read(nodes.size());
  ParallelFor(nodes.size(), options_.parallelism, [&](size_t i) {
    std::vector<std::string> paths;
    for (const std::string& phase : phases) paths.push_back(StepRecordPath(*nodes[i], phase));
    read[i] = channels_.Of(nodes[i]->name).ReadFiles(paths);
  });
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (size_t p = 0; p < phases.size() && p < read[i].size(); ++p) {
      // Missing: nothing recorded. Any other error: unknown, asked again.
      if (read[i][p].ok()) {
        known_[nodes[i]->name][phases[p]] = std::string(absl::StripAsciiWhitespace(*read[i][p]));
      } else if (absl::IsNotFound(read[i][p].status())) {
        known_[nodes[i]->name][phases[p]] = "";
      }
    }
  }
}

std::optional<std::string> StepRecords::Known(const Step& step) const {
  absl::MutexLock lock(&mu_);
  auto node = known_.find(step.node);
  if (node == known_.end()) return std::nullopt;
  auto phase = node->second.find(std::string(PhaseName(step.phase)));
  if (phase == node->second.end()) return std::nullopt;
  return phase->second;
}

bool StepRecords::Holds(const Step& step, const std::string& hash) {
  if (options_.force || options_.check_only || hash.empty()) return false;
  if (std::optional<std::string> known = Known(step); known.has_value()) return *known == hash;
  absl::StatusOr<std::string> recorded = channels_.Of(step.node).ReadFile(
      StepRecordPath(NodeOf(step), PhaseName(step.phase)));
  return recorded.ok() && absl::StripAsciiWhitespace(*recorded) == hash;
}

bool StepRecords::AllHold(const Phase& phase) {
  std::vector<char> held(phase.steps.size(), 0);
  ParallelFor(phase.steps.size(), options_.parallelism, [&](size_t i) {
    const Step& step = phase.steps[i];
    held[i] = channels_.Has(step.node) && Holds(step, step.hash);
  });
  return std::all_of(held.begin(), held.end(), [](char h) { return h != 0; });
}

std::optional<StepRecords::RecordFile> StepRecords::RecordOf(const Step& step,
                                                             const std::string& hash) const {
  if (hash.empty() || options_.check_only) return std::nullopt;
  return RecordFile{StepRecordPath(NodeOf(step), PhaseName(step.phase)),
                    absl::StrCat(hash, "\n")};
}

std::string StepRecords::RecordCommand(const Step& step, const std::string& hash) const {
  std::optional<RecordFile> record = RecordOf(step, hash);
  if (!record.has_value()) return "";
  std::string temporary = absl::StrCat(record->path, ".tmp");
  return absl::StrCat("umask 077 && mkdir -p ", ShellQuote(Dirname(record->path)),
                      " && printf '%s\\n' ", ShellQuote(hash), " >", ShellQuote(temporary),
                      " && mv -f ", ShellQuote(temporary), " ", ShellQuote(record->path));
}

absl::Status StepRecords::Record(const Step& step, const std::string& hash) {
  std::optional<RecordFile> record = RecordOf(step, hash);
  if (!record.has_value()) return absl::OkStatus();
  absl::Status written = channels_.Of(step.node).WriteFile(record->path, record->content, 0600);
  // A failed write may have left either: ask the node next time.
  if (written.ok()) {
    Written(step, hash);
  } else {
    Forget(step);
  }
  return written;
}

absl::Status StepRecords::RecordPhase(const Phase& phase) {
  std::vector<absl::Status> recorded(phase.steps.size());
  ParallelFor(phase.steps.size(), options_.parallelism,
              [&](size_t i) { recorded[i] = Record(phase.steps[i], phase.steps[i].hash); });
  for (size_t i = 0; i < phase.steps.size(); ++i) {
    if (!recorded[i].ok()) {
      return absl::Status(recorded[i].code(), absl::StrCat("node '", phase.steps[i].node,
                                                           "': ", recorded[i].message()));
    }
  }
  return absl::OkStatus();
}

void StepRecords::Written(const Step& step, const std::string& hash) {
  absl::MutexLock lock(&mu_);
  auto node = known_.find(step.node);
  if (node == known_.end()) return;
  // Only phases read ahead are kept; the others are read from the node.
  auto phase = node->second.find(std::string(PhaseName(step.phase)));
  if (phase != node->second.end()) phase->second = hash;
}

void StepRecords::Forget(const Step& step) {
  absl::MutexLock lock(&mu_);
  auto node = known_.find(step.node);
  if (node != known_.end()) node->second.erase(std::string(PhaseName(step.phase)));
}

}  // namespace fleetplan
