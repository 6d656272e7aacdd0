#ifndef FLEETPLAN_TRAINER_NCCL_PROCESS_GROUP_H_
#define FLEETPLAN_TRAINER_NCCL_PROCESS_GROUP_H_

// A process group on raw NCCL. Debian's LibTorch is CPU-only and has no
// ProcessGroupNCCL, so this one stages CPU tensors through device buffers:
// copy in, ncclAllReduce / ncclBroadcast on the GPU, copy out. Built only
// with --config=nccl; other builds link a stub that explains how to get it.

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fleetplan::trainer {

// OK when this binary has NCCL and the host has a CUDA device;
// FailedPrecondition saying which is missing otherwise.
absl::Status CheckNcclAvailable();

// Creates the NCCL communicator of `world_size` ranks on device
// `local_rank`; rank 0 publishes the NCCL unique id through `store`.
// FailedPrecondition as above; Internal when CUDA or NCCL fails.
absl::StatusOr<c10::intrusive_ptr<c10d::ProcessGroup>> MakeNcclProcessGroup(
    const c10::intrusive_ptr<c10d::Store>& store, int rank, int world_size,
    int local_rank);

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_NCCL_PROCESS_GROUP_H_
