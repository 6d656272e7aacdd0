// The executor's hold on the chief's apply.lock (state_lock.h).

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "tools/apply/executor.h"
#include "tools/protocol/node_layout.h"

namespace fleetplan {

std::optional<ApplyResult> Executor::LockState() {
  if (!options_.lock_state || state_lock_ != nullptr) return std::nullopt;
  const NodeSpec& chief = spec_.chief();
  lock_store_ = std::make_unique<ConnectionLockStore>(*connections_.at(chief.name),
                                                      StateLockPath(chief));
  LockEnvironment env = ThisProcessLockEnvironment(
      [this] {
        absl::MutexLock lock(&mu_);
        return interrupted_;
      },
      options_.on_lock_message);
  state_lock_ = std::make_unique<StateLock>(
      *lock_store_, ThisProcessHolder(absl::Now()), std::move(env),
      absl::StrCat("spec '", spec_.name, "' (", StateLockPath(chief), " on ", chief.name, ")"));
  absl::Status locked = state_lock_->Acquire(options_.lock_timeout);
  if (locked.ok()) return std::nullopt;
  state_lock_.reset();
  lock_store_.reset();
  ApplyResult result;
  result.exit_code = absl::IsAborted(locked)     ? kExitLocked
                     : absl::IsCancelled(locked) ? kExitInterrupted
                                                 : kExitApplyFailed;
  result.message = std::string(locked.message());
  // Nothing was touched: what the holder obtained (an allocation) stays.
  result.job_untouched = true;
  return result;
}

void Executor::UnlockState() {
  if (state_lock_ == nullptr) return;
  absl::Status released = state_lock_->Release();
  if (!released.ok() && options_.on_lock_message) options_.on_lock_message(released.message());
  state_lock_.reset();
  lock_store_.reset();
}

}  // namespace fleetplan
