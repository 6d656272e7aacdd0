#include "tools/agent/unproven_admission.h"

namespace fleetplan {

Admission AdmitUnproven(size_t unproven, std::optional<absl::Time> oldest, absl::Time now) {
  if (unproven < kMaxUnproven || !oldest.has_value()) return Admission::kAdmit;
  if (now - *oldest >= kUnprovenGrace) return Admission::kAdmitCuttingOffOldest;
  return Admission::kRefuse;
}

}  // namespace fleetplan
