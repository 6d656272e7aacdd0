#include "tools/cli/prepare.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "plugins/transport.h"
#include "tools/plan/compile.h"
#include "tools/sync/source_manifest.h"
#include "tools/sync/sync_tree.h"
#include "tools/util/heap_reserve.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

std::string Where(const NodeSpec& node) {
  if (node.location.file.empty()) return "";
  return absl::StrCat(node.location.file, ":", node.location.line, ":",
                      node.location.column, ": ");
}

}  // namespace

absl::Status ValidateNodes(const ClusterSpec& spec) {
  for (const NodeSpec& node : spec.nodes) {
    absl::StatusOr<Transport*> transport = TransportRegistry::Global().Find(node.transport);
    if (!transport.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          Where(node), "node '", node.name, "': ", transport.status().message()));
    }
    absl::Status valid = (*transport)->ValidateNode(spec, node);
    if (!valid.ok()) {
      return absl::Status(valid.code(), absl::StrCat(Where(node), valid.message()));
    }
    if (spec.sync.enabled && (*transport)->SharesLocalFilesystem()) {
      absl::Status target = CheckSyncTarget(spec.sync.source, node.workdir);
      if (!target.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(Where(node), "node '", node.name, "': ", target.message()));
      }
    }
  }
  return absl::OkStatus();
}

void ReservePlanMemory(size_t nodes) {
  // About what a plan and its rendering take per node (each node's
  // preflight script, environment, launch command and ranks), measured at
  // 1,000 nodes.
  constexpr size_t kBytesPerNode = 16 << 10;
  ReserveHugePageHeap(nodes * kBytesPerNode);
}

absl::StatusOr<Prepared> PrepareFromSpec(ClusterSpec spec) {
  FP_RETURN_IF_ERROR(ValidateNodes(spec));
  Prepared prepared;
  CompileInputs& inputs = prepared.inputs;
  if (spec.sync.enabled) {
    FP_ASSIGN_OR_RETURN(prepared.source, BuildSourceManifest(spec.sync.source, spec.sync.exclude,
                                                            DigestCachePath(spec.sync.source)));
    inputs.source_hash = prepared.source.SourceDigest();
    for (const ManifestEntry& entry : prepared.source.entries) {
      inputs.source_bytes += entry.size;
    }
  }
  FP_ASSIGN_OR_RETURN(prepared.plan, CompilePlan(spec, inputs));
  prepared.spec = std::move(spec);
  return prepared;
}

}  // namespace fleetplan
