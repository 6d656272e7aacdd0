#include "tools/cli/spec_lock.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/apply/connect_nodes.h"
#include "tools/apply/executor.h"
#include "tools/protocol/node_layout.h"

namespace fleetplan {
namespace {

void SayOnStderr(absl::string_view message) {
  std::fprintf(stderr, "%.*s\n", static_cast<int>(message.size()), message.data());
}

std::string LockName(const ClusterSpec& spec) {
  return absl::StrCat("spec '", spec.name, "' (", StateLockPath(spec.chief()), " on ",
                      spec.chief().name, ")");
}

}  // namespace

HeldSpecLock::HeldSpecLock(Connection& chief, const ClusterSpec& spec)
    : store_(chief, StateLockPath(spec.chief())),
      lock_(store_, ThisProcessHolder(absl::Now()),
            ThisProcessLockEnvironment(nullptr, SayOnStderr), LockName(spec)) {}

absl::Status HeldSpecLock::Acquire(absl::Duration timeout) { return lock_.Acquire(timeout); }

absl::StatusOr<std::unique_ptr<HeldSpecLock>> LockSpec(
    const ClusterSpec& spec, const std::map<std::string, std::unique_ptr<Connection>>& open,
    absl::Duration timeout) {
  auto chief = open.find(spec.chief().name);
  if (chief == open.end()) return nullptr;
  auto held = std::make_unique<HeldSpecLock>(*chief->second, spec);
  if (absl::Status locked = held->Acquire(timeout); !locked.ok()) return locked;
  return held;
}

int ForceUnlockSpec(const ClusterSpec& spec, const TransportOptions& options) {
  TransportOptions reach = options;
  reach.read_only = true;  // create nothing just to unlock it
  absl::StatusOr<std::unique_ptr<Connection>> chief = ConnectNode(spec, spec.chief(), reach);
  if (!chief.ok()) {
    SayOnStderr(absl::StrCat("apply --force-unlock: ", chief.status().message()));
    return kExitApplyFailed;
  }
  ConnectionLockStore store(**chief, StateLockPath(spec.chief()));
  absl::StatusOr<std::optional<std::string>> removed = ForceUnlock(store);
  if (!removed.ok()) {
    SayOnStderr(absl::StrCat("apply --force-unlock: ", removed.status().message()));
    return kExitApplyFailed;
  }
  if (!removed->has_value()) {
    std::printf("%s was not locked\n", LockName(spec).c_str());
  } else {
    std::printf("removed the lock of %s, held by %s\n", LockName(spec).c_str(),
                (*removed)->c_str());
  }
  return 0;
}

int LockExitCode(const absl::Status& status) {
  return absl::IsAborted(status) ? kExitLocked : kExitApplyFailed;
}

}  // namespace fleetplan
