// Executor::ReadNodeStates: what the nodes hold of earlier applies, for
// `plan --refresh`.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tools/apply/executor.h"
#include "tools/apply/parallel_for.h"
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

}  // namespace

absl::StatusOr<std::map<std::string, NodeState>> Executor::ReadNodeStates() {
  FP_RETURN_IF_ERROR(Connect());
  const Manifest sources = SourcesOf(source_);
  std::vector<NodeState> states(spec_.nodes.size());
  std::vector<absl::Status> errors(spec_.nodes.size());
  ParallelFor(
      spec_.nodes.size(), options_.parallelism,
      [&](size_t i) {
        const NodeSpec& node = spec_.nodes[i];
        Connection& connection = *connections_.at(node.name);
        NodeState& state = states[i];
        for (const Phase& phase : plan_.phases) {
          absl::StatusOr<std::string> record =
              connection.ReadFile(StepRecordPath(node, phase.kind));
          if (record.ok()) {
            state.records[phase.kind] = std::string(absl::StripAsciiWhitespace(*record));
          } else if (!absl::IsNotFound(record.status())) {
            errors[i] = record.status();
            return;
          }
        }
        Manifest recorded;
        absl::StatusOr<std::string> text = connection.ReadFile(SyncManifestPath(node));
        if (text.ok()) {
          absl::StatusOr<Manifest> parsed = ParseManifest(*text);
          // An unreadable manifest is resent in full by apply, as if absent.
          if (parsed.ok() && !parsed->entries.empty()) {
            recorded = SourcesOf(*std::move(parsed));
            state.tree_recorded = true;
          }
        } else if (!absl::IsNotFound(text.status())) {
          errors[i] = text.status();
          return;
        }
        ManifestDiff diff = DiffManifests(recorded, sources);
        state.files_to_send = diff.to_send.size();
        for (const ManifestEntry& entry : diff.to_send) state.bytes_to_send += entry.size;
        state.files_to_remove = diff.to_remove.size();
      },
      [] { return true; });
  std::map<std::string, NodeState> by_name;
  for (size_t i = 0; i < spec_.nodes.size(); ++i) {
    if (!errors[i].ok()) {
      return absl::Status(errors[i].code(), absl::StrCat("node '", spec_.nodes[i].name,
                                                         "': ", errors[i].message()));
    }
    by_name[spec_.nodes[i].name] = std::move(states[i]);
  }
  return by_name;
}

}  // namespace fleetplan
