#include "tools/agent/detached_launch.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tools/process/files.h"
#include "tools/protocol/job_state.h"

namespace fleetplan {
namespace {

int stop_pipe[2] = {-1, -1};

void OnStopSignal(int) {
  char byte = 1;
  ssize_t ignored = write(stop_pipe[1], &byte, 1);
  (void)ignored;
}

// Signals become a readable pipe the agent polls with its ranks. A
// detached agent ignores SIGHUP: the session it was started from may end.
bool InstallStopSignals(bool ignore_hangup) {
  if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    std::perror("fleetplan-agent: pipe");
    return false;
  }
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnStopSignal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  if (ignore_hangup) {
    signal(SIGHUP, SIG_IGN);
  } else {
    sigaction(SIGHUP, &action, nullptr);
  }
  // A closed stdout must not kill the agent before it stops its ranks.
  signal(SIGPIPE, SIG_IGN);
  return true;
}

int RunAgent(NodeAgentOptions options, bool detached) {
  if (!InstallStopSignals(detached)) return 1;
  options.stop_fd = stop_pipe[0];
  absl::StatusOr<NodeJobState> result = RunNodeAgent(options);
  if (!result.ok()) {
    std::fprintf(stderr, "fleetplan-agent: %s\n", std::string(result.status().message()).c_str());
    return result.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  return result->exit_status;
}

// The last lines of `path`, for saying why a detached agent ended early.
std::string LastLines(const std::string& path, size_t lines) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return "";
  std::vector<absl::string_view> all = absl::StrSplit(*text, '\n', absl::SkipEmpty());
  size_t from = all.size() > lines ? all.size() - lines : 0;
  return absl::StrJoin(all.begin() + from, all.end(), "\n");
}

// What a detached launch says, to `report` when it is a job step's task
// (stdout and stderr otherwise): its status on the first line, then the
// words. False when the report cannot be written.
bool SayLaunched(const std::string& report, int status, const std::string& words) {
  if (report.empty()) {
    std::fprintf(status == 0 ? stdout : stderr, "%s\n", words.c_str());
    std::fflush(nullptr);
    return true;
  }
  absl::Status written = WriteFileAtomic(report, absl::StrCat(status, "\n", words, "\n"), 0600);
  if (!written.ok()) {
    std::fprintf(stderr, "fleetplan-agent: %s\n", std::string(written.message()).c_str());
  }
  return written.ok();
}

// What the agent that said it started is doing: running its ranks, or (in
// an elastic job) waiting as a spare, which its job.json says.
std::string StartedWhat(const NodeAgentOptions& options) {
  absl::StatusOr<std::string> json = ReadFileToString(JobStatePath(options.request.log_dir));
  absl::StatusOr<NodeJobState> state =
      json.ok() ? JobStateFromJson(*json) : absl::StatusOr<NodeJobState>(json.status());
  if (state.ok() && state->waiting == "spare") return "waiting as a spare, no rank started";
  return "ranks started";
}

// The status a job step's task ends with once its agent ended with `code`.
// A bad one ends the step on every node at once (srun --kill-on-bad-exit):
// right for an agent that died (killed, crashed) without the job's end
// written down, whose peers may not know; wrong for a job the agents ended
// among themselves (a rank failed, a stop), whose other agents are writing
// that end down as this one exits. That is 0, with the job's end said.
int StepTaskStatus(const NodeAgentOptions& options, pid_t agent, int code) {
  if (code == 0) return 0;
  absl::StatusOr<std::string> json = ReadFileToString(JobStatePath(options.request.log_dir));
  if (!json.ok()) return code;
  absl::StatusOr<NodeJobState> state = JobStateFromJson(*json);
  if (!state.ok() || !IsFinal(state->phase) || state->agent_pid != agent ||
      (!options.request.run_id.empty() && state->run_id != options.request.run_id)) {
    return code;
  }
  std::fprintf(stderr, "%s: the job ended %s (exit %d); this agent ended with it\n",
               options.request.node.c_str(), std::string(JobPhaseName(state->phase)).c_str(), code);
  return 0;
}

// The forked agent: in a session of its own, stdin from /dev/null, output
// to `agent_log`; it writes 'S' (its ranks started) or 'E' to `ready_fd`.
[[noreturn]] void BecomeDetachedAgent(NodeAgentOptions options, const std::string& agent_log,
                                      int ready_fd) {
  setsid();
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int log = open(agent_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (null < 0 || log < 0) _exit(1);
  dup2(null, STDIN_FILENO);
  dup2(log, STDOUT_FILENO);
  dup2(log, STDERR_FILENO);
  options.stdin_fd = -1;
  options.output_fd = STDOUT_FILENO;
  options.echo_rank_output = false;
  options.on_started = [ready_fd](bool started) {
    char byte = started ? 'S' : 'E';
    ssize_t ignored = write(ready_fd, &byte, 1);
    (void)ignored;
    close(ready_fd);
  };
  std::fflush(nullptr);
  _exit(RunAgent(options, /*detached=*/true));
}

// The first byte the agent writes to `fd`: 'S' once its ranks started;
// anything else (or none) when it ended before.
char ReadyByte(int fd) {
  char byte = 0;
  ssize_t n;
  do {
    n = read(fd, &byte, 1);
  } while (n < 0 && errno == EINTR);
  close(fd);
  return n == 1 ? byte : 0;
}

int WaitForAgent(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// $FLEETPLAN_LAUNCH_REPORT, taken out of the environment (it is not the
// ranks' business); "" when not set.
std::string TakeLaunchReport() {
  const char* path = std::getenv("FLEETPLAN_LAUNCH_REPORT");
  if (path == nullptr) return "";
  std::string report = path;
  unsetenv("FLEETPLAN_LAUNCH_REPORT");
  return report;
}

}  // namespace

int RunForeground(NodeAgentOptions options) { return RunAgent(options, /*detached=*/false); }

int RunDetached(NodeAgentOptions options) {
  std::string report = TakeLaunchReport();
  if (absl::Status made = MakeDirs(options.request.log_dir); !made.ok()) {
    std::fprintf(stderr, "fleetplan-agent: %s\n", std::string(made.message()).c_str());
    return 1;
  }
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) {
    std::perror("fleetplan-agent: pipe");
    return 1;
  }
  std::string agent_log = AgentLogPath(options.request.log_dir);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fleetplan-agent: fork");
    return 1;
  }
  if (pid == 0) {
    close(ready[0]);
    BecomeDetachedAgent(options, agent_log, ready[1]);
  }
  close(ready[1]);
  if (ReadyByte(ready[0]) == 'S') {
    bool said = SayLaunched(
        report, 0,
        absl::StrCat(options.request.node, ": ", StartedWhat(options), " (agent ", pid, ", run ",
                     options.request.run_id.empty() ? "?" : options.request.run_id, ")"));
    if (report.empty()) return 0;
    // A report nobody can read: the launch would wait for it in vain.
    if (!said) kill(pid, SIGTERM);
    return StepTaskStatus(options, pid, WaitForAgent(pid));
  }
  // The agent ended before its ranks started: its status and last words.
  int code = WaitForAgent(pid);
  if (code == 0) code = 1;
  SayLaunched(report, code, LastLines(agent_log, 20));
  return code;
}

}  // namespace fleetplan
