#ifndef FLEETPLAN_TOOLS_APPLY_STATE_LOCK_H_
#define FLEETPLAN_TOOLS_APPLY_STATE_LOCK_H_

// One apply of a spec at a time, as Terraform locks its state: apply, stop
// and apply --destroy hold the chief's <workdir>/.fleetplan/apply.lock
// while they change the nodes' records and the job. The lock's logic
// (wait, take over a stale lock, release only one's own) is here, over a
// LockStore; ConnectionLockStore keeps it on the chief through its
// Connection, whatever the transport.

#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "plugins/transport.h"
#include "tools/protocol/state_lock_record.h"

namespace fleetplan {

// Where a lock is kept: the seam the lock's logic is tested through.
class LockStore {
 public:
  virtual ~LockStore() = default;
  // Creates the lock with `content` in one step, unless one exists: true
  // when this call created it, false when a lock was there.
  // FailedPrecondition when the lock's folder cannot be made (an
  // unwritable workdir): there is then nothing there to race for.
  virtual absl::StatusOr<bool> CreateExclusive(absl::string_view content) = 0;
  // The lock's content; NotFound when there is none.
  virtual absl::StatusOr<std::string> Read() = 0;
  // Removes the lock if its content is still `expected`: true when removed;
  // false when it holds something else, is gone, or another caller is
  // removing it at the same moment.
  virtual absl::StatusOr<bool> RemoveIf(absl::string_view expected) = 0;
  // Removes the lock whatever it holds (--force-unlock).
  virtual absl::Status Remove() = 0;
};

// The lock file on a node, changed by small shell commands on its
// Connection (a hard link makes the creation atomic and the content whole
// when it appears; a mkdir guards compare-and-remove).
class ConnectionLockStore : public LockStore {
 public:
  // `lock_path`: an absolute path on the node; `connection` must outlive this.
  ConnectionLockStore(Connection& connection, std::string lock_path)
      : connection_(connection), path_(std::move(lock_path)) {}
  absl::StatusOr<bool> CreateExclusive(absl::string_view content) override;
  absl::StatusOr<std::string> Read() override;
  absl::StatusOr<bool> RemoveIf(absl::string_view expected) override;
  absl::Status Remove() override;

 private:
  // Runs `script`; its exit status, its output in `*output`.
  absl::StatusOr<int> RunScript(const std::string& script, std::string* output);
  // Internal: "cannot <what> <path> (status N): <output>".
  absl::Status ScriptFailed(absl::string_view what, int status, absl::string_view output) const;
  Connection& connection_;
  std::string path_;
};

// What the lock's logic needs of the world; tests give their own.
struct LockEnvironment {
  std::function<absl::Time()> now;
  // Waits up to `duration`; false when the wait was interrupted.
  std::function<bool(absl::Duration)> sleep;
  // True only when `holder` is known to have ended (same host, its pid gone).
  std::function<bool(const StateLockHolder&)> holder_gone;
  // Told once, when a wait for `holder` starts, and when a stale lock is taken over.
  std::function<void(absl::string_view message)> say;
};

// The environment of this process: the real clock, kill(pid, 0) for a
// holder on this host, `interrupted` polled while waiting.
LockEnvironment ThisProcessLockEnvironment(std::function<bool()> interrupted,
                                           std::function<void(absl::string_view)> say);

// This process as a holder: hostname, user, pid, `now` and a run id made
// of them.
StateLockHolder ThisProcessHolder(absl::Time now);

// True when `holder` ran on this host and its pid no longer exists.
bool HolderGoneFromThisHost(const StateLockHolder& holder);

class StateLock {
 public:
  // `store` must outlive this. `what`: the lock's name in messages
  // ("the state of spec 'x'").
  StateLock(LockStore& store, StateLockHolder me, LockEnvironment env, std::string what);
  ~StateLock();

  // Takes the lock, waiting up to `timeout` (zero: one try). Aborted naming
  // the holder and the ways out when it stays held; Cancelled when the
  // wait is interrupted; other errors from the store. OK without holding
  // it (held() false) when the store cannot make the lock's folder (an
  // unwritable workdir): nothing can be raced for there, and the step
  // that writes there says what is wrong better than the lock could.
  absl::Status Acquire(absl::Duration timeout);

  // Gives the lock back if this holds it (and it is still this one's).
  absl::Status Release();

  bool held() const { return held_; }

 private:
  // One attempt: OK when taken; the holder's text when another holds it.
  absl::StatusOr<std::optional<std::string>> TryOnce();
  std::string Describe(absl::string_view text) const;

  LockStore& store_;
  StateLockHolder me_;
  std::string content_;
  LockEnvironment env_;
  std::string what_;
  bool held_ = false;
};

// --force-unlock: removes the lock whatever holds it. Returns who held it
// (DescribeStateLock, or the raw content when it does not parse), nullopt
// when there was no lock.
absl::StatusOr<std::optional<std::string>> ForceUnlock(LockStore& store);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_STATE_LOCK_H_
