#ifndef FLEETPLAN_TOOLS_CLI_PREPARE_H_
#define FLEETPLAN_TOOLS_CLI_PREPARE_H_

// What both `plan` and `apply` do before anything runs: load the spec, let
// each node's transport check it, take the source tree's manifest (the only
// I/O the plan depends on), and compile the plan.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "plugins/transport.h"
#include "tools/plan/compile.h"
#include "tools/plan/plan.h"
#include "tools/spec/cluster_spec.h"
#include "tools/sync/manifest.h"

namespace fleetplan {

struct Prepared {
  ClusterSpec spec;
  Manifest source;  // of [sync] source; empty without [sync]
  CompileInputs inputs;  // what the plan was compiled from besides the spec
  Plan plan;
};

// Checks every node against the transport it names: InvalidArgument with
// the node's `file:line:col` when the transport is unknown (listing the
// registered ones, with a suggestion), or what Transport::ValidateNode
// says. Also refuses a workdir that is, holds or lies in the sync source.
absl::Status ValidateNodes(const ClusterSpec& spec);

// Grows the heap once, backed by huge pages, for what compiling and
// rendering the plan of `nodes` nodes allocates (see heap_reserve.h): a
// cold `plan` of 1,000 nodes spent most of its time faulting in 4 KiB
// pages. Does nothing for small clusters. PrepareFromFile calls it.
void ReservePlanMemory(size_t nodes);

// ValidateNodes, the source manifest, CompilePlan. Errors from each stage
// are returned as they are (InvalidArgument for a bad spec, NotFound for a
// missing source tree).
absl::StatusOr<Prepared> PrepareFromSpec(ClusterSpec spec);

// Loads the spec file at `spec_path` (absolute) and PrepareFromSpec. With
// `resolve`, the nodes' transports first give them their hosts
// (ResolveSpecNodes: apply obtains a Slurm allocation, a read-only resolve
// finds a live one); what a resolve obtained is released again when
// preparing fails.
absl::StatusOr<Prepared> PrepareFromFile(const std::string& spec_path,
                                         const TransportOptions* resolve = nullptr);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_PREPARE_H_
