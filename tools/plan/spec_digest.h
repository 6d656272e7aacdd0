#ifndef FLEETPLAN_TOOLS_PLAN_SPEC_DIGEST_H_
#define FLEETPLAN_TOOLS_PLAN_SPEC_DIGEST_H_

#include <string>

#include "tools/spec/cluster_spec.h"

namespace fleetplan {

// Digest of a canonical serialization of every field of the resolved spec,
// in a fixed order. A saved plan records it, and apply refuses the plan
// when the spec it reads now digests differently. Source locations are left
// out: moving text in the file without changing its meaning does not make a
// plan stale.
std::string SpecDigest(const ClusterSpec& spec);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PLAN_SPEC_DIGEST_H_
