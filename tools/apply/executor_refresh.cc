// Executor::ReadNodeStates: what the nodes hold of earlier applies, for
// `plan --refresh`.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tools/apply/executor.h"
#include "tools/apply/parallel_for.h"
#include "tools/protocol/node_layout.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

// The source files only: the built program and the agent are not known
// before the build, so they are left out of the comparison on both sides.
Manifest SourcesOf(Manifest manifest) {
  std::vector<ManifestEntry>& entries = manifest.entries;
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [](const ManifestEntry& entry) { return entry.extra; }),
                entries.end());
  return manifest;
}

// Reads `node`'s step records of `plan`'s phases into `state`, and the
// source files of its last sync's manifest into `recorded` (left empty when
// there is none or it cannot be parsed: apply then resends everything).
absl::Status ReadRecords(Connection& connection, const NodeSpec& node, const Plan& plan,
                         NodeState* state, Manifest* recorded) {
  for (const Phase& phase : plan.phases) {
    absl::StatusOr<std::string> record =
        connection.ReadFile(StepRecordPath(node, PhaseName(phase.kind)));
    if (record.ok()) {
      state->records[phase.kind] = std::string(absl::StripAsciiWhitespace(*record));
    } else if (!absl::IsNotFound(record.status())) {
      return record.status();
    }
  }
  absl::StatusOr<std::string> text = connection.ReadFile(SyncManifestPath(node));
  if (!text.ok()) return absl::IsNotFound(text.status()) ? absl::OkStatus() : text.status();
  absl::StatusOr<Manifest> parsed = ParseManifest(*text);
  state->manifest_recorded = parsed.ok() && !parsed->entries.empty();
  if (parsed.ok() && !parsed->entries.empty()) {
    *recorded = SourcesOf(*std::move(parsed));
    state->tree_recorded = true;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::map<std::string, NodeState>> Executor::ReadNodeStates() {
  FP_RETURN_IF_ERROR(Open(/*tolerate_not_there=*/true));
  const ClusterSpec& spec = context_.spec;
  const Manifest sources = SourcesOf(source_);
  std::vector<NodeState> states(spec.nodes.size());
  std::vector<absl::Status> errors(spec.nodes.size());
  ParallelFor(
      spec.nodes.size(), options_.parallelism,
      [&](size_t i) {
        const NodeSpec& node = spec.nodes[i];
        NodeState& state = states[i];
        Manifest recorded;
        // A node apply has yet to create holds nothing: every step runs.
        if (!channels_.NotThere(node.name)) {
          errors[i] = ReadRecords(channels_.Of(node.name), node, context_.plan, &state, &recorded);
          if (!errors[i].ok()) return;
        }
        ManifestDiff diff = DiffManifests(recorded, sources);
        state.files_to_send = diff.to_send.size();
        for (const ManifestEntry& entry : diff.to_send) state.bytes_to_send += entry.size;
        state.files_to_remove = diff.to_remove.size();
      });
  std::map<std::string, NodeState> by_name;
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    if (!errors[i].ok()) {
      return absl::Status(errors[i].code(), absl::StrCat("node '", spec.nodes[i].name,
                                                         "': ", errors[i].message()));
    }
    by_name[spec.nodes[i].name] = std::move(states[i]);
  }
  return by_name;
}

}  // namespace fleetplan
