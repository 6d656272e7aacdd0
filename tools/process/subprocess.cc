#include "tools/process/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tools/process/exec_args.h"

extern char** environ;

namespace fleetplan {
namespace {

// A process's pipes close as it exits, a moment before its exit can be
// reaped, and nothing wakes a poll when it can: for this long after its
// output ended, an unreaped process is looked at every kExitPoll instead
// of every pump's timeout (a command that ends at once is seen ending at
// once, on a loaded machine too; one that closed its output and runs on
// costs a couple of thousand empty polls once, not a busy loop).
constexpr absl::Duration kExitWatch = absl::Seconds(2);
constexpr absl::Duration kExitPoll = absl::Milliseconds(1);

absl::Status ErrnoError(absl::string_view what, int err) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(err)));
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// This process's environment, as "NAME=value" entries.
std::vector<std::string> Environ() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

// InvalidArgument unless `cwd` is empty (this process's) or a directory.
absl::Status CheckWorkingDirectory(const std::string& cwd) {
  struct stat st;
  if (cwd.empty() || (stat(cwd.c_str(), &st) == 0 && S_ISDIR(st.st_mode))) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("working directory \"", cwd, "\" does not exist"));
}

// Resolves argv[0] against PATH in `env` before fork, since the child may
// only make async-signal-safe calls.
absl::StatusOr<std::string> ResolveProgram(const std::string& name,
                                           const std::vector<std::string>& env) {
  return FindProgram(name, SearchPath(env));
}

// Puts `fd` on `target` in the child, leaving it open across exec.
void MoveFdInChild(int fd, int target) {
  if (fd == target) {
    fcntl(fd, F_SETFD, 0);
  } else {
    dup2(fd, target);
  }
}

// Runs in the forked child: only async-signal-safe calls until execve.
[[noreturn]] void ExecChild(pid_t parent, const char* program, char* const* argv,
                            char* const* envp, const char* cwd, int stdin_fd,
                            int output_fd, int error_fd, bool dies_with_thread) {
  // Our own group, so one kill(-pid) reaches everything the child starts.
  setpgid(0, 0);
  // Die with the parent; if it is already gone, the signal never comes.
  if (dies_with_thread) prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  // Ignored signals and the blocked mask survive exec; give the program
  // the defaults it expects.
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGPIPE, &dfl, nullptr);
  sigaction(SIGINT, &dfl, nullptr);
  sigaction(SIGTERM, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);

  MoveFdInChild(stdin_fd, 0);
  MoveFdInChild(output_fd, 1);
  dup2(1, 2);
  int err = 0;
  if (cwd != nullptr && chdir(cwd) != 0) {
    err = errno;
  } else {
    execve(program, argv, envp);
    err = errno;
  }
  // Tell the parent why through the close-on-exec pipe.
  ssize_t ignored = write(error_fd, &err, sizeof(err));
  (void)ignored;
  _exit(127);
}

// The child's ends and ours of its stdin, its output and the pipe through
// which it reports a failed exec. Close-on-exec everywhere, so children
// started by other threads at the same time do not inherit (and hold open)
// these pipes.
struct ChildPipes {
  int in[2] = {-1, -1};
  int out[2] = {-1, -1};
  int exec_error[2] = {-1, -1};

  // stdin is a pipe with `stdin_pipe`, else /dev/null. On error, nothing
  // is left open.
  absl::Status Open(bool stdin_pipe) {
    if (stdin_pipe) {
      if (pipe2(in, O_CLOEXEC) != 0) return ErrnoError("pipe", errno);
    } else {
      in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (in[0] < 0) return ErrnoError("open /dev/null", errno);
    }
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(exec_error, O_CLOEXEC) != 0) {
      int e = errno;
      CloseAll();
      return ErrnoError("pipe", e);
    }
    return absl::OkStatus();
  }

  void CloseChildEnds() {
    CloseFd(in[0]);
    CloseFd(out[1]);
    CloseFd(exec_error[1]);
  }

  void CloseAll() {
    for (int* fd : {&in[0], &in[1], &out[0], &out[1], &exec_error[0], &exec_error[1]}) {
      CloseFd(*fd);
    }
  }
};

// Waits until the child has exec'd (its end of the pipe closes) or says
// why it could not; closes `fd`. Internal naming `program` on failure.
absl::Status AwaitExec(int& fd, const std::string& program) {
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(fd, &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  CloseFd(fd);
  if (n > 0) {
    return absl::InternalError(
        absl::StrCat("cannot start \"", program, "\": ", std::strerror(child_errno)));
  }
  return absl::OkStatus();
}

}  // namespace

int ExitStatusFromWait(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 255;
}

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(
    const SubprocessOptions& options) {
  if (options.argv.empty()) return absl::InvalidArgumentError("empty argv");
  absl::Status cwd = CheckWorkingDirectory(options.cwd);
  if (!cwd.ok()) return cwd;
  std::vector<std::string> env = MergeEnv(Environ(), options.env);
  auto program = ResolveProgram(options.argv[0], env);
  if (!program.ok()) return program.status();

  // Everything the child needs is built before fork.
  std::vector<char*> argv = NullTerminated(options.argv);
  std::vector<char*> envp = NullTerminated(env);
  ChildPipes pipes;
  absl::Status opened = pipes.Open(options.stdin_pipe);
  if (!opened.ok()) return opened;

  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    pipes.CloseAll();
    return ErrnoError("fork", e);
  }
  if (pid == 0) {
    ExecChild(parent, program->c_str(), argv.data(), envp.data(),
              options.cwd.empty() ? nullptr : options.cwd.c_str(), pipes.in[0], pipes.out[1],
              pipes.exec_error[1], options.dies_with_thread);
  }
  // Also from the parent: a signal sent before the child ran setpgid must
  // still find the group.
  setpgid(pid, pid);
  pipes.CloseChildEnds();

  auto process = std::unique_ptr<Subprocess>(new Subprocess);
  process->pid_ = pid;
  process->output_fd_ = pipes.out[0];
  process->stdin_fd_ = pipes.in[1];
  fcntl(process->output_fd_, F_SETFL, O_NONBLOCK);
  // On failure, the destructor reaps the failed child.
  absl::Status exec = AwaitExec(pipes.exec_error[0], options.argv[0]);
  if (!exec.ok()) return exec;
  return process;
}

Subprocess::~Subprocess() {
  CloseFd(stdin_fd_);
  CloseFd(output_fd_);
  if (pid_ > 0 && !exit_status_.has_value()) {
    SignalGroup(SIGKILL);
    int status;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

void Subprocess::ReadOutput(const std::function<void(absl::string_view)>& on_output) {
  char buffer[16384];
  while (output_fd_ >= 0) {
    ssize_t n = read(output_fd_, buffer, sizeof(buffer));
    if (n > 0) {
      on_output(absl::string_view(buffer, n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      return;
    } else {
      CloseFd(output_fd_);  // EOF, or an error that no retry will fix
      output_ended_at_ = absl::Now();
    }
  }
}

absl::Status Subprocess::WriteStdin(absl::string_view bytes) {
  if (stdin_fd_ < 0) return absl::UnavailableError("the child's stdin is closed");
  // A child gone makes write(2) raise SIGPIPE: blocked here, and a pending
  // one taken back, so the error is a status, not this process's end.
  sigset_t pipe_only, previous;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
  int error = 0;
  while (!bytes.empty()) {
    ssize_t n = write(stdin_fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = errno;
      break;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  if (error == EPIPE) {
    const struct timespec now = {0, 0};
    sigtimedwait(&pipe_only, nullptr, &now);
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (error != 0) {
    return absl::UnavailableError(
        absl::StrCat("writing to the child's stdin: ", std::strerror(error)));
  }
  return absl::OkStatus();
}

void Subprocess::CloseStdin() { CloseFd(stdin_fd_); }

std::optional<int> Subprocess::TryWait() {
  if (exit_status_.has_value() || pid_ <= 0) return exit_status_;
  int status;
  struct rusage usage {};
  pid_t r;
  do {
    r = wait4(pid_, &status, WNOHANG, &usage);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    exit_status_ = ExitStatusFromWait(status);
    if (WIFSIGNALED(status)) {
      ending_.signal = WTERMSIG(status);
      ending_.core_dumped = WCOREDUMP(status);
    }
    ending_.peak_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // KiB on Linux
    // Finish off whatever the child left running in its group, now, while
    // the group id cannot belong to anyone else yet.
    kill(-pid_, SIGKILL);
  } else if (r < 0) {
    exit_status_ = 255;  // ECHILD: someone else reaped it; nothing to wait for
  }
  return exit_status_;
}

void Subprocess::SignalGroup(int signal) {
  if (pid_ > 0) kill(-pid_, signal);
}

std::vector<size_t> PumpOutput(absl::Span<Subprocess* const> processes,
                               absl::Span<const int> watch_fds,
                               absl::Duration timeout,
                               const IndexedOutput& on_output) {
  std::vector<pollfd> fds;
  std::vector<size_t> owner;  // index into processes for each output pollfd
  for (size_t i = 0; i < processes.size(); ++i) {
    if (!processes[i]->output_open()) continue;
    fds.push_back({processes[i]->output_fd(), POLLIN, 0});
    owner.push_back(i);
  }
  const size_t first_watch = fds.size();
  for (int fd : watch_fds) fds.push_back({fd, POLLIN, 0});
  const absl::Time now = absl::Now();
  for (const Subprocess* process : processes) {
    std::optional<absl::Time> ended = process->output_ended_at();
    if (ended.has_value() && !process->exit_status().has_value() && now - *ended < kExitWatch) {
      timeout = std::min(timeout, kExitPoll);
    }
  }

  int timeout_ms = static_cast<int>(absl::ToInt64Milliseconds(timeout));
  std::vector<size_t> ready;
  if (poll(fds.data(), fds.size(), timeout_ms) <= 0) return ready;
  for (size_t k = 0; k < first_watch; ++k) {
    if (fds[k].revents == 0) continue;
    size_t i = owner[k];
    processes[i]->ReadOutput(
        [&](absl::string_view chunk) { on_output(i, chunk); });
  }
  for (size_t k = first_watch; k < fds.size(); ++k) {
    if (fds[k].revents != 0) ready.push_back(k - first_watch);
  }
  return ready;
}

void StopAll(absl::Span<Subprocess* const> processes, absl::Duration grace,
             const IndexedOutput& on_output) {
  for (Subprocess* p : processes) {
    if (!p->TryWait().has_value()) p->SignalGroup(SIGTERM);
  }
  const absl::Time kill_at = absl::Now() + grace;
  bool killed = false;
  while (true) {
    bool running = false, output = false;
    for (Subprocess* p : processes) {
      running |= !p->TryWait().has_value();
      output |= p->output_open();
    }
    if (!running && !output) return;
    if (!killed && absl::Now() >= kill_at) {
      for (Subprocess* p : processes) {
        if (!p->exit_status().has_value()) p->SignalGroup(SIGKILL);
      }
      killed = true;
    }
    // Output held open by a process that left its group: stop waiting.
    if (!running && absl::Now() >= kill_at + absl::Seconds(1)) return;
    PumpOutput(processes, {}, absl::Milliseconds(10), on_output);
  }
}

absl::StatusOr<Completed> RunToCompletion(SubprocessOptions options, absl::Duration timeout) {
  options.stdin_pipe = false;
  absl::StatusOr<std::unique_ptr<Subprocess>> child = Subprocess::Start(options);
  if (!child.ok()) return child.status();
  Subprocess* processes[] = {child->get()};
  Completed completed;
  auto append = [&](size_t, absl::string_view chunk) { absl::StrAppend(&completed.output, chunk); };
  absl::Time deadline = absl::Now() + timeout;
  while (!(*child)->TryWait().has_value() || (*child)->output_open()) {
    if (absl::Now() >= deadline) {
      completed.timed_out = true;
      StopAll(processes, absl::Seconds(1), append);
      break;
    }
    // Once the output has ended, only the exit is awaited: poll for it
    // often, as a short command's caller waits on it.
    absl::Duration poll = (*child)->output_open() ? absl::Milliseconds(100) : absl::Milliseconds(1);
    PumpOutput(processes, {}, std::min(poll, deadline - absl::Now()), append);
  }
  completed.status = (*child)->TryWait().value_or(128 + SIGKILL);
  return completed;
}

}  // namespace fleetplan
