#include "tools/apply/apply_lock.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/protocol/node_layout.h"

namespace fleetplan {

std::optional<ApplyResult> ApplyLock::Acquire() {
  if (!options_.lock_state || lock_ != nullptr) return std::nullopt;
  const NodeSpec& chief = spec_.chief();
  store_ = std::make_unique<ConnectionLockStore>(channels_.Of(chief.name), StateLockPath(chief));
  LockEnvironment env = ThisProcessLockEnvironment([this] { return state_.interrupted(); },
                                                   options_.on_lock_message);
  lock_ = std::make_unique<StateLock>(
      *store_, ThisProcessHolder(absl::Now()), std::move(env),
      absl::StrCat("spec '", spec_.name, "' (", StateLockPath(chief), " on ", chief.name, ")"));
  absl::Status locked = lock_->Acquire(options_.lock_timeout);
  if (locked.ok()) return std::nullopt;
  lock_.reset();
  store_.reset();
  ApplyResult result;
  result.exit_code = absl::IsAborted(locked)     ? kExitLocked
                     : absl::IsCancelled(locked) ? kExitInterrupted
                                                 : kExitApplyFailed;
  result.message = std::string(locked.message());
  // Nothing was touched: what the holder obtained (an allocation) stays.
  result.job_untouched = true;
  return result;
}

void ApplyLock::Release() {
  if (lock_ == nullptr) return;
  absl::Status released = lock_->Release();
  if (!released.ok() && options_.on_lock_message) options_.on_lock_message(released.message());
  lock_.reset();
  store_.reset();
}

}  // namespace fleetplan
