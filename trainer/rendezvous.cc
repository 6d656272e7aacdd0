#include "trainer/rendezvous.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/match.h"
#include "tools/util/status_macros.h"
#include "trainer/nccl_process_group.h"

namespace fleetplan::trainer {
namespace {

constexpr char kArrivedKey[] = "fleetplan/rendezvous/arrived";
// Collectives may legitimately wait on a slow peer (rank 0 writing a
// checkpoint, a first-step warm-up), so they get more time than arrival.
constexpr absl::Duration kMinCollectiveTimeout = absl::Minutes(5);

std::chrono::milliseconds ToChrono(absl::Duration d) {
  return std::chrono::milliseconds(absl::ToInt64Milliseconds(d));
}

bool IsLoopback(const std::string& addr) {
  return addr == "localhost" || absl::StartsWith(addr, "127.") || addr == "::1";
}

// Loopback jobs bind Gloo to 127.0.0.1; otherwise GLOO_SOCKET_IFNAME picks
// the interface, else the address this host's name resolves to.
std::shared_ptr<gloo::transport::Device> GlooDevice(const DistEnv& env) {
  if (IsLoopback(env.master_addr)) {
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  }
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME")) {
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  }
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

absl::StatusOr<c10::intrusive_ptr<c10d::Store>> ConnectStore(
    const DistEnv& env, absl::Duration timeout) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(env.master_port);
  options.isServer = env.rank == 0;
  options.numWorkers = env.world_size;
  // Arrival is checked below with our own deadline and message.
  options.waitWorkers = false;
  options.timeout = ToChrono(timeout);
  try {
    return c10::intrusive_ptr<c10d::Store>(
        c10::make_intrusive<c10d::TCPStore>(env.master_addr, options));
  } catch (const std::exception& e) {
    return absl::DeadlineExceededError(absl::StrCat(
        "rank ", env.rank, ": cannot reach the rendezvous master at ",
        env.master_addr, ":", env.master_port, " within ",
        absl::FormatDuration(timeout), " (is rank 0 running?): ", e.what()));
  }
}

// Blocks until all ranks have checked in, or `timeout` passes.
absl::Status WaitForAllRanks(c10d::Store& store, const DistEnv& env,
                             absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  try {
    int64_t arrived = store.add(kArrivedKey, 1);
    while (arrived < env.world_size) {
      if (absl::Now() > deadline) {
        return absl::DeadlineExceededError(absl::StrCat(
            "rank ", env.rank, ": only ", arrived, " of ", env.world_size,
            " ranks reached the rendezvous at ", env.master_addr, ":",
            env.master_port, " within ", absl::FormatDuration(timeout)));
      }
      absl::SleepFor(absl::Milliseconds(20));
      arrived = store.add(kArrivedKey, 0);
    }
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat(
        "rank ", env.rank, ": rendezvous store failed: ", e.what()));
  }
  return absl::OkStatus();
}

absl::StatusOr<c10::intrusive_ptr<c10d::ProcessGroup>> MakeGloo(
    const c10::intrusive_ptr<c10d::Store>& store, const DistEnv& env,
    absl::Duration timeout) {
  try {
    auto options = c10d::ProcessGroupGloo::Options::create(
        ToChrono(std::max(timeout, kMinCollectiveTimeout)));
    options->devices.push_back(GlooDevice(env));
    auto prefixed = c10::make_intrusive<c10d::PrefixStore>("gloo", store);
    return c10::intrusive_ptr<c10d::ProcessGroup>(
        c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, env.rank,
                                                    env.world_size, options));
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat(
        "rank ", env.rank, ": cannot create the Gloo process group: ",
        e.what()));
  }
}

}  // namespace

absl::StatusOr<Backend> ParseBackend(absl::string_view name) {
  if (name == "gloo") return Backend::kGloo;
  if (name == "nccl") return Backend::kNccl;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown --backend=", name, ": expected gloo or nccl"));
}

absl::StatusOr<Group> Rendezvous(const DistEnv& env, Backend backend,
                                 absl::Duration timeout) {
  // Fail before touching the network when this build cannot do NCCL.
  if (backend == Backend::kNccl) FP_RETURN_IF_ERROR(CheckNcclAvailable());
  Group group;
  FP_ASSIGN_OR_RETURN(group.store, ConnectStore(env, timeout));
  FP_RETURN_IF_ERROR(WaitForAllRanks(*group.store, env, timeout));
  if (backend == Backend::kNccl) {
    auto prefixed = c10::make_intrusive<c10d::PrefixStore>("nccl", group.store);
    FP_ASSIGN_OR_RETURN(group.process_group,
                        MakeNcclProcessGroup(prefixed, env.rank,
                                             env.world_size, env.local_rank));
  } else {
    FP_ASSIGN_OR_RETURN(group.process_group,
                        MakeGloo(group.store, env, timeout));
  }
  return group;
}

}  // namespace fleetplan::trainer
