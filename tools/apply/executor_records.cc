// The step records apply reads before deciding to skip a step: read ahead
// at once per node, then kept true by what this apply writes, so that the
// environment, preflight and launch phases of an edit loop decide without a
// round trip each.

#include <vector>

#include "absl/strings/strip.h"
#include "tools/apply/executor.h"
#include "tools/apply/parallel_for.h"
#include "tools/protocol/node_layout.h"

namespace fleetplan {

void Executor::PrefetchStepRecords() {
  {
    absl::MutexLock lock(&mu_);
    step_records_.clear();
  }
  if (options_.force || options_.check_only) return;
  // The phases after the sync whose steps are skipped on their record.
  std::vector<std::string> phases;
  for (PhaseKind kind : {PhaseKind::kEnvironment, PhaseKind::kPreflight, PhaseKind::kLaunch}) {
    if (FindPhase(plan_, kind) != nullptr) phases.emplace_back(PhaseName(kind));
  }
  if (phases.empty()) return;
  std::vector<const NodeSpec*> nodes;
  for (const NodeSpec& node : spec_.nodes) {
    if (connections_.count(node.name) != 0) nodes.push_back(&node);
  }
  std::vector<std::vector<absl::StatusOr<std::string>>> read(nodes.size());
  ParallelFor(nodes.size(), options_.parallelism, [&](size_t i) {
    std::vector<std::string> paths;
    for (const std::string& phase : phases) paths.push_back(StepRecordPath(*nodes[i], phase));
    read[i] = connections_.at(nodes[i]->name)->ReadFiles(paths);
  });
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (size_t p = 0; p < phases.size() && p < read[i].size(); ++p) {
      // Missing: nothing recorded. Any other error: unknown, asked again.
      if (read[i][p].ok()) {
        step_records_[nodes[i]->name][phases[p]] =
            std::string(absl::StripAsciiWhitespace(*read[i][p]));
      } else if (absl::IsNotFound(read[i][p].status())) {
        step_records_[nodes[i]->name][phases[p]] = "";
      }
    }
  }
}

std::optional<std::string> Executor::KnownRecord(const Step& step) const {
  absl::MutexLock lock(&mu_);
  auto node = step_records_.find(step.node);
  if (node == step_records_.end()) return std::nullopt;
  auto phase = node->second.find(std::string(PhaseName(step.phase)));
  if (phase == node->second.end()) return std::nullopt;
  return phase->second;
}

void Executor::NoteRecord(const Step& step, const std::string& hash) {
  absl::MutexLock lock(&mu_);
  auto node = step_records_.find(step.node);
  if (node == step_records_.end()) return;
  // Only phases read ahead are kept; the others are read from the node.
  auto phase = node->second.find(std::string(PhaseName(step.phase)));
  if (phase != node->second.end()) phase->second = hash;
}

void Executor::ForgetRecord(const Step& step) {
  absl::MutexLock lock(&mu_);
  auto node = step_records_.find(step.node);
  if (node != step_records_.end()) node->second.erase(std::string(PhaseName(step.phase)));
}

}  // namespace fleetplan
