// PrepareFromFile lives apart so that tests of PrepareFromSpec need no
// parser.
#include "tools/cli/prepare.h"
#include "tools/spec/spec_parser.h"
#include "tools/util/status_macros.h"

namespace fleetplan {

absl::StatusOr<Prepared> PrepareFromFile(const std::string& spec_path) {
  FP_ASSIGN_OR_RETURN(ClusterSpec spec, LoadSpecFile(spec_path));
  ReservePlanMemory(spec.nodes.size());
  return PrepareFromSpec(std::move(spec));
}

}  // namespace fleetplan
