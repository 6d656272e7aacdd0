#ifndef FLEETPLAN_TRAINER_RENDEZVOUS_H_
#define FLEETPLAN_TRAINER_RENDEZVOUS_H_

// Rendezvous through c10d's TCPStore (rank 0 serves it at MASTER_ADDR:
// MASTER_PORT) and the process group the ranks all-reduce over.

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "trainer/dist_env.h"

namespace fleetplan::trainer {

enum class Backend { kGloo, kNccl };

// "gloo" or "nccl"; InvalidArgument otherwise.
absl::StatusOr<Backend> ParseBackend(absl::string_view name);

struct Group {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroup> process_group;
};

// Meets the other ranks of `env` and builds a `backend` process group.
// Every rank must arrive within `timeout`: DeadlineExceeded (naming the
// master's address) when the master never answers or a rank never comes;
// FailedPrecondition for NCCL in a build without it or on a host without a
// GPU.
absl::StatusOr<Group> Rendezvous(const DistEnv& env, Backend backend,
                                 absl::Duration timeout);

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_RENDEZVOUS_H_
