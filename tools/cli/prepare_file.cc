// PrepareFromFile lives apart so that tests of PrepareFromSpec need no
// parser.
#include "tools/cli/prepare.h"
#include "tools/spec/spec_parser.h"
#include "tools/util/status_macros.h"

namespace fleetplan {

absl::StatusOr<Prepared> PrepareFromFile(const std::string& spec_path,
                                         const TransportOptions* resolve) {
  FP_ASSIGN_OR_RETURN(ClusterSpec spec, LoadSpecFile(spec_path));
  ReservePlanMemory(spec.nodes.size());
  if (resolve == nullptr) return PrepareFromSpec(std::move(spec));
  // An unknown transport is named at its file:line:col before any resolves.
  FP_RETURN_IF_ERROR(ValidateNodes(spec));
  FP_RETURN_IF_ERROR(ResolveSpecNodes(spec, *resolve));
  ClusterSpec resolved = spec;
  absl::StatusOr<Prepared> prepared = PrepareFromSpec(std::move(spec));
  if (!prepared.ok() && !resolve->read_only) ReleaseSpec(resolved).IgnoreError();
  return prepared;
}

}  // namespace fleetplan
