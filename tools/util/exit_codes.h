#ifndef FLEETPLAN_TOOLS_UTIL_EXIT_CODES_H_
#define FLEETPLAN_TOOLS_UTIL_EXIT_CODES_H_

// The exit codes of every fleetplan command, in one table: the constants the
// code returns and the meanings `fleetplan help` and the man pages print.
// A job's own failure is the exit status of its first failing rank instead.

namespace fleetplan {

inline constexpr int kExitOk = 0;
// A step, a check or a node failed (apply, plan --check, status, logs, stop).
inline constexpr int kExitApplyFailed = 1;
// Bad input: the command line, a spec error, a stale saved plan.
inline constexpr int kExitBadInput = 2;
// Another apply, stop or destroy of the spec holds its lock (EX_CANTCREAT).
inline constexpr int kExitLocked = 73;
// The connection to a node was lost while following the job, which goes on
// without fleetplan (EX_TEMPFAIL: look later).
inline constexpr int kExitDetached = 75;
// Interrupted (Ctrl-C, SIGTERM) or the job was stopped.
inline constexpr int kExitInterrupted = 130;

struct ExitCodeMeaning {
  int code;
  const char* meaning;
};

inline constexpr ExitCodeMeaning kExitCodeTable[] = {
    {kExitOk, "success"},
    {kExitApplyFailed, "failed: a step, a check, or a node that could not be read or stopped"},
    {kExitBadInput, "bad input: the command line, the spec, or a stale saved plan"},
    {kExitLocked, "another apply, stop or destroy of the spec holds its lock (named)"},
    {kExitDetached, "detached: the connection was lost; the job goes on"},
    {kExitInterrupted, "interrupted (Ctrl-C) or stopped"},
};

// The meaning of `code` in kExitCodeTable, or nullptr for a code not in it.
inline const char* ExitCodeMeaningOf(int code) {
  for (const ExitCodeMeaning& entry : kExitCodeTable) {
    if (entry.code == code) return entry.meaning;
  }
  return nullptr;
}

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_UTIL_EXIT_CODES_H_
