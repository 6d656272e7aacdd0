#ifndef FLEETPLAN_TOOLS_PLAN_COMPILE_H_
#define FLEETPLAN_TOOLS_PLAN_COMPILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "tools/plan/plan.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

// What the plan depends on besides the spec, computed by the caller (which
// may do I/O) so that compiling stays pure.
struct CompileInputs {
  // Digest of the synced tree's manifest; "" without [sync].
  std::string source_hash;
  // Size of the synced tree's files; 0 without [sync]. Preflight checks
  // that the workdir has room for it.
  uint64_t source_bytes = 0;
};

// Compiles `spec` into a Plan: all six phases in order (empty ones have no
// steps), one step per node per phase, every rank's environment (see
// rank_env.h), and the digests. Pure and deterministic: the same inputs give
// the same plan, byte for byte.
//
// Returns InvalidArgument for a spec no plan can run: no nodes, duplicate
// node names, nproc below 1, a workdir that is not absolute, more than one
// chief, a settings group the spec does not define, or no job.program.
absl::StatusOr<Plan> CompilePlan(const ClusterSpec& spec,
                                 const CompileInputs& inputs);

// The plan `plan --check` runs: the preflight phase alone, its checks in
// PreflightMode::kCheckOnly (they change nothing on the nodes). Errors as
// CompilePlan's.
absl::StatusOr<Plan> CompileCheckPlan(const ClusterSpec& spec,
                                      const CompileInputs& inputs);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PLAN_COMPILE_H_
