#include "tools/apply/state_lock.h"

#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/protocol/job_state.h"
#include "tools/util/path_policy.h"
#include "tools/util/shell_quote.h"

namespace fleetplan {
namespace {

// How often a waiting apply looks at the lock again.
constexpr absl::Duration kPollInterval = absl::Milliseconds(500);
// Exit statuses of the scripts besides 0 (done) and sh's own errors.
constexpr int kExitExists = 3;  // a lock is there / holds something else
constexpr int kExitMissing = 4;  // there is no lock
constexpr int kExitBusy = 5;    // another caller is comparing and removing
constexpr int kExitNoFolder = 6;  // the lock's folder cannot be made

std::string UserName() {
  if (struct passwd* entry = getpwuid(getuid()); entry != nullptr) return entry->pw_name;
  const char* user = std::getenv("USER");
  return user != nullptr ? user : absl::StrCat("uid ", getuid());
}

std::string HostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

}  // namespace

absl::StatusOr<int> ConnectionLockStore::RunScript(const std::string& script,
                                                   std::string* output) {
  CommandSpec command;
  command.command = script;
  command.brief = true;
  return connection_.Run(
      command, [output](absl::string_view chunk) { absl::StrAppend(output, chunk); }, nullptr);
}

absl::Status ConnectionLockStore::ScriptFailed(absl::string_view what, int status,
                                               absl::string_view output) const {
  return absl::InternalError(
      absl::StrCat("cannot ", what, " ", path_, " (status ", status, "): ", output));
}

absl::StatusOr<bool> ConnectionLockStore::CreateExclusive(absl::string_view content) {
  // The content goes to a file of this command's own ($$), then a hard
  // link names it: link(2) fails when the name exists, and a reader never
  // sees the lock half-written.
  std::string lock = ShellQuote(path_);
  std::string temporary = absl::StrCat(ShellQuote(HiddenBeside(path_, ".")), "$$");
  std::string script = absl::StrCat(
      "umask 077; mkdir -p ", ShellQuote(Dirname(path_)), " 2>&1 || exit ", kExitNoFolder,
      "; t=", temporary,
      " && printf '%s' ", ShellQuote(content), " >\"$t\" && if ln \"$t\" ", lock,
      " 2>/dev/null; then rm -f \"$t\"; else rm -f \"$t\"; [ -e ", lock, " ] && exit ",
      kExitExists, "; exit 1; fi");
  std::string output;
  absl::StatusOr<int> status = RunScript(script, &output);
  if (!status.ok()) return status.status();
  if (*status == 0) return true;
  if (*status == kExitExists) return false;
  if (*status == kExitNoFolder) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot make the folder of ", path_, ": ", output));
  }
  return ScriptFailed("create", *status, output);
}

absl::StatusOr<std::string> ConnectionLockStore::Read() {
  // A command, not ReadFile: a transport may answer reads from what it
  // read earlier (Slurm's snapshot), and the lock changes under it.
  // A lock released between the test and the read is missing too, not an
  // error: the caller tries to take it again.
  std::string lock = ShellQuote(path_);
  std::string output;
  absl::StatusOr<int> status =
      RunScript(absl::StrCat("[ -e ", lock, " ] || exit ", kExitMissing, "; cat ", lock,
                             " || { [ -e ", lock, " ] || exit ", kExitMissing, "; exit 1; }"),
                &output);
  if (!status.ok()) return status.status();
  if (*status == kExitMissing) return absl::NotFoundError(absl::StrCat(path_, ": no lock"));
  if (*status != 0) return ScriptFailed("read", *status, output);
  return output;
}

absl::StatusOr<bool> ConnectionLockStore::RemoveIf(absl::string_view expected) {
  // Compare and remove under a mkdir of their own: two callers that both
  // found the same stale lock cannot remove a lock taken in between.
  std::string lock = ShellQuote(path_);
  std::string guard = ShellQuote(absl::StrCat(path_, ".takeover"));
  std::string script = absl::StrCat(
      "mkdir ", guard, " 2>/dev/null || exit ", kExitBusy, "; if [ \"$(cat ", lock,
      " 2>/dev/null)\" = ", ShellQuote(expected), " ]; then rm -f ", lock,
      "; r=0; else r=", kExitExists, "; fi; rmdir ", guard, "; exit $r");
  std::string output;
  absl::StatusOr<int> status = RunScript(script, &output);
  if (!status.ok()) return status.status();
  if (*status == 0) return true;
  if (*status == kExitExists || *status == kExitBusy) return false;
  return ScriptFailed("remove", *status, output);
}

absl::Status ConnectionLockStore::Remove() {
  std::string output;
  absl::StatusOr<int> status = RunScript(
      absl::StrCat("rm -f ", ShellQuote(path_), " && { rmdir ",
                   ShellQuote(absl::StrCat(path_, ".takeover")), " 2>/dev/null; true; }"),
      &output);
  if (!status.ok()) return status.status();
  if (*status != 0) return ScriptFailed("remove", *status, output);
  return absl::OkStatus();
}

bool HolderGoneFromThisHost(const StateLockHolder& holder) {
  // On another host a pid says nothing; there, only --force-unlock.
  if (holder.host != HostName() || holder.pid <= 0) return false;
  return kill(holder.pid, 0) != 0 && errno == ESRCH;
}

StateLockHolder ThisProcessHolder(absl::Time now) {
  return {HostName(), UserName(), static_cast<int>(getpid()), now, MakeRunId(now, getpid())};
}

LockEnvironment ThisProcessLockEnvironment(std::function<bool()> interrupted,
                                           std::function<void(absl::string_view)> say) {
  LockEnvironment env;
  env.now = [] { return absl::Now(); };
  env.sleep = [interrupted](absl::Duration duration) {
    absl::Time until = absl::Now() + duration;
    while (absl::Now() < until) {
      if (interrupted && interrupted()) return false;
      absl::SleepFor(std::min(absl::Milliseconds(50), until - absl::Now()));
    }
    return !(interrupted && interrupted());
  };
  env.holder_gone = HolderGoneFromThisHost;
  env.say = std::move(say);
  return env;
}

StateLock::StateLock(LockStore& store, StateLockHolder me, LockEnvironment env, std::string what)
    : store_(store),
      me_(std::move(me)),
      content_(SerializeStateLock(me_)),
      env_(std::move(env)),
      what_(std::move(what)) {}

StateLock::~StateLock() { Release().IgnoreError(); }

std::string StateLock::Describe(absl::string_view text) const {
  absl::StatusOr<StateLockHolder> holder = ParseStateLock(text);
  return holder.ok() ? DescribeStateLock(*holder) : absl::StrCat("unreadable lock '", text, "'");
}

absl::StatusOr<std::optional<std::string>> StateLock::TryOnce() {
  absl::StatusOr<bool> created = store_.CreateExclusive(content_);
  if (!created.ok()) return created.status();
  if (*created) return std::nullopt;
  absl::StatusOr<std::string> text = store_.Read();
  // Released between the two: the next try may get it.
  if (absl::IsNotFound(text.status())) return std::optional<std::string>("");
  if (!text.ok()) return text.status();
  absl::StatusOr<StateLockHolder> holder = ParseStateLock(*text);
  if (holder.ok() && env_.holder_gone(*holder)) {
    absl::StatusOr<bool> removed = store_.RemoveIf(*text);
    if (!removed.ok()) return removed.status();
    if (*removed && env_.say) {
      env_.say(absl::StrCat("took over ", what_, " from ", DescribeStateLock(*holder),
                            ": that process is gone"));
    }
    return std::optional<std::string>("");
  }
  return std::optional<std::string>(*text);
}

absl::Status StateLock::Acquire(absl::Duration timeout) {
  if (held_) return absl::OkStatus();
  absl::Time deadline = env_.now() + timeout;
  bool told = false;
  // A lock that keeps changing hands is waited for like a held one; the
  // bound keeps a zero timeout from spinning forever on a vanishing lock.
  for (int tries = 0;; ++tries) {
    absl::StatusOr<std::optional<std::string>> held_by = TryOnce();
    if (absl::IsFailedPrecondition(held_by.status())) return absl::OkStatus();
    if (!held_by.ok()) {
      return absl::Status(held_by.status().code(),
                          absl::StrCat("cannot lock ", what_, ": ", held_by.status().message()));
    }
    if (!held_by->has_value()) {
      held_ = true;
      return absl::OkStatus();
    }
    const std::string& text = **held_by;
    absl::Time now = env_.now();
    if (text.empty() && tries < 3) continue;  // freed or taken over: try at once
    std::string holder = text.empty() ? "another command" : Describe(text);
    if (now >= deadline) {
      return absl::AbortedError(absl::StrCat(
          what_, " is locked by ", holder,
          timeout > absl::ZeroDuration() ? absl::StrCat(" (waited ", absl::FormatDuration(timeout), ")")
                                         : "",
          ". Wait for it with --lock-timeout=DURATION; if that command is gone (on another "
          "machine, say), remove its lock with apply --force-unlock"));
    }
    if (!told && env_.say) {
      env_.say(absl::StrCat("waiting for ", what_, ", locked by ", holder));
      told = true;
    }
    if (!env_.sleep(std::min(kPollInterval, deadline - now))) {
      return absl::CancelledError(absl::StrCat("interrupted while waiting for ", what_));
    }
  }
}

absl::Status StateLock::Release() {
  if (!held_) return absl::OkStatus();
  held_ = false;
  // Only this one's own: after a --force-unlock another may hold it now.
  absl::StatusOr<bool> removed = store_.RemoveIf(content_);
  if (!removed.ok()) {
    return absl::Status(removed.status().code(),
                        absl::StrCat("cannot unlock ", what_, ": ", removed.status().message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> ForceUnlock(LockStore& store) {
  absl::StatusOr<std::string> text = store.Read();
  if (absl::IsNotFound(text.status())) return std::nullopt;
  if (!text.ok()) return text.status();
  if (absl::Status removed = store.Remove(); !removed.ok()) return removed;
  absl::StatusOr<StateLockHolder> holder = ParseStateLock(*text);
  return std::optional<std::string>(holder.ok() ? DescribeStateLock(*holder) : *text);
}

}  // namespace fleetplan
