#include "tools/cli/saved_plan.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tools/process/files.h"

namespace fleetplan {

absl::Status SavePlan(const Plan& plan, const std::string& path) {
  absl::Status written = WriteFileAtomic(path, RenderPlanJson(plan), 0644);
  if (!written.ok()) {
    return absl::Status(written.code(),
                        absl::StrCat("cannot save the plan to ", path, ": ",
                                     written.message()));
  }
  return absl::OkStatus();
}

bool LooksLikeSavedPlan(absl::string_view path) { return absl::EndsWith(path, ".json"); }

absl::Status CheckPlanCurrent(const SavedPlanRef& saved, const Plan& fresh,
                              const std::string& source_root) {
  const std::string refuse = "refusing the saved plan: ";
  if (saved.spec_hash != fresh.spec_hash) {
    return absl::FailedPreconditionError(absl::StrCat(
        refuse, "the spec changed since the plan was saved (", saved.spec_path,
        "); run plan again"));
  }
  if (saved.source_hash != fresh.source_hash) {
    return absl::FailedPreconditionError(absl::StrCat(
        refuse, "the sources under ", source_root,
        " changed since the plan was saved; run plan again"));
  }
  if (saved.hash != fresh.hash) {
    return absl::FailedPreconditionError(absl::StrCat(
        refuse, "the plan computed now differs from the saved one (another version "
                "of fleetplan?); run plan again"));
  }
  return absl::OkStatus();
}

}  // namespace fleetplan
