// The NCCL process group of builds without --config=nccl.

#include "absl/status/status.h"
#include "trainer/nccl_process_group.h"

namespace fleetplan::trainer {
namespace {

absl::Status NotBuilt() {
  return absl::FailedPreconditionError(
      "--backend=nccl: this binary was built without NCCL; rebuild with "
      "`bazel build --config=nccl //trainer:train` on a host with CUDA and "
      "NCCL, or use --backend=gloo");
}

}  // namespace

absl::Status CheckNcclAvailable() { return NotBuilt(); }

absl::StatusOr<c10::intrusive_ptr<c10d::ProcessGroup>> MakeNcclProcessGroup(
    const c10::intrusive_ptr<c10d::Store>&, int, int, int) {
  return NotBuilt();
}

}  // namespace fleetplan::trainer
