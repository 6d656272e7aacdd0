#ifndef FLEETPLAN_TOOLS_PROCESS_SUBPROCESS_H_
#define FLEETPLAN_TOOLS_PROCESS_SUBPROCESS_H_

// Child processes as the launch agent and the local transport need them:
// each child leads its own process group (so one signal reaches everything
// it started), dies with its parent (PR_SET_PDEATHSIG), reads stdin from a
// pipe or /dev/null, and writes stdout and stderr into one pipe that a
// poll-based pump drains.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace fleetplan {

struct SubprocessOptions {
  // argv[0] is searched in PATH (of the child's environment) unless it
  // contains a '/'.
  std::vector<std::string> argv;
  // Added to (and overriding) this process's environment.
  std::vector<std::pair<std::string, std::string>> env;
  std::string cwd;  // empty: this process's
  // true: stdin is a pipe the parent holds until CloseStdin(); false:
  // /dev/null.
  bool stdin_pipe = false;
  // SIGKILL once the parent is gone (PR_SET_PDEATHSIG). The kernel means
  // the thread that started the child, not the process: a child that one
  // thread starts and others go on using needs false, and then ends by
  // other means when this process does (its stdin pipe closing).
  bool dies_with_thread = true;
};

// A running (or finished) child process. Not thread-safe. The destructor
// kills the child's process group with SIGKILL and reaps it if it still
// runs, so a Subprocess never leaks a process.
class Subprocess {
 public:
  // Starts a child. NotFound when argv[0] is not found or not executable,
  // InvalidArgument for an empty argv or a missing cwd, Internal when a
  // system call fails.
  static absl::StatusOr<std::unique_ptr<Subprocess>> Start(
      const SubprocessOptions& options);

  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }

  // The read end of the merged stdout/stderr pipe; -1 once it reached EOF.
  int output_fd() const { return output_fd_; }
  bool output_open() const { return output_fd_ >= 0; }

  // Reads what is available on the output pipe without blocking and passes
  // it to `on_output`; closes the pipe at EOF.
  void ReadOutput(const std::function<void(absl::string_view)>& on_output);
  // When ReadOutput found the output's end (nullopt while it is open). The
  // pipe closes as the child exits, a moment before it can be reaped.
  std::optional<absl::Time> output_ended_at() const { return output_ended_at_; }

  // Writes all of `bytes` to the child's stdin pipe (options.stdin_pipe),
  // blocking until the pipe took them. Unavailable when the child closed
  // its end (no SIGPIPE reaches this process) or the pipe is closed.
  absl::Status WriteStdin(absl::string_view bytes);

  // Closes the parent's end of the stdin pipe, so the child reads EOF.
  void CloseStdin();

  // Reaps the child if it has exited; returns its exit status (128 + N for
  // signal N), or nullopt while it runs. On reaping, SIGKILLs what is left
  // in the child's process group: nothing a child starts outlives it.
  std::optional<int> TryWait();
  // The exit status once reaped.
  std::optional<int> exit_status() const { return exit_status_; }
  // How it ended, as the kernel told the wait (not guessed from the exit
  // status: `exit 137` is no SIGKILL). Valid once reaped.
  struct Ending {
    int signal = 0;  // the signal that ended it; 0: it exited
    bool core_dumped = false;
    uint64_t peak_rss_bytes = 0;  // its largest resident set (wait4's ru_maxrss); 0: unknown
  };
  const Ending& ending() const { return ending_; }

  // Sends `signal` to the child's process group (ESRCH is fine: the group
  // is gone already).
  void SignalGroup(int signal);

 private:
  Subprocess() = default;

  pid_t pid_ = -1;
  int output_fd_ = -1;
  int stdin_fd_ = -1;
  std::optional<absl::Time> output_ended_at_;
  std::optional<int> exit_status_;
  Ending ending_;
};

using IndexedOutput = std::function<void(size_t index, absl::string_view chunk)>;

// One round of the output pump: waits up to `timeout` until output from
// one of `processes` or one of `watch_fds` is readable, then drains every
// readable output pipe into `on_output(index in processes, chunk)`. Returns
// the indexes (into `watch_fds`) of the watched descriptors that are
// readable or hung up; the caller reads them. Interrupted waits (EINTR)
// return early with nothing. For two seconds after a process's output
// ended and while it is not reaped (TryWait), the wait is 1 ms at most:
// the exit can be reaped a moment after the pipes close.
std::vector<size_t> PumpOutput(absl::Span<Subprocess* const> processes,
                               absl::Span<const int> watch_fds,
                               absl::Duration timeout,
                               const IndexedOutput& on_output);

// Stops `processes`: SIGTERM to each process group, output still pumped
// into `on_output`, SIGKILL to the groups of those still running after
// `grace`; returns when all are reaped and their output drained (or one
// second after `grace` when a process that left its group holds a pipe).
void StopAll(absl::Span<Subprocess* const> processes, absl::Duration grace,
             const IndexedOutput& on_output);

// What a command run to its end printed and how it ended.
struct Completed {
  int status = -1;         // exit status, 128 + N for signal N
  bool timed_out = false;  // stopped after the timeout (status is then the signal's)
  std::string output;      // stdout and stderr, merged
};

// Starts a child as Start does (stdin /dev/null), collects its output until
// it ends, and stops its process group (SIGTERM, SIGKILL a second later)
// once `timeout` has passed. Errors as Start's.
absl::StatusOr<Completed> RunToCompletion(SubprocessOptions options, absl::Duration timeout);

// Exit status of a waitpid() status word: the exit code, or 128 + signal.
int ExitStatusFromWait(int wait_status);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROCESS_SUBPROCESS_H_
