#include "plugins/slurm/agent_step.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "plugins/slurm/slurm_commands.h"
#include "plugins/slurm/slurm_connection.h"
#include "re2/re2.h"
#include "tools/process/files.h"
#include "tools/protocol/agent_command.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

// How long a node's launch waits for the other nodes' to come (each first
// writes its agent script: one job step).
constexpr absl::Duration kJoinWait = absl::Minutes(5);
// How long, once the step was asked for, a node waits for its agent's word
// (the step's start, the agent's, its peers' and its ranks').
constexpr absl::Duration kReportWait = absl::Seconds(120);
constexpr absl::Duration kPoll = absl::Milliseconds(100);
// How long the request waits for the allocation's batch script to be there.
constexpr absl::Duration kHolderWait = absl::Minutes(2);

// The run a launch's agent command names (its --run-id): the launches of
// one run make one job step.
std::string RunIdOf(const CommandSpec& command) {
  absl::StatusOr<AgentCommand> agent = ParseAgentCommandLine(command.command);
  if (!agent.ok() || !std::holds_alternative<AgentLaunch>(*agent)) return "";
  return std::get<AgentLaunch>(*agent).run_id;
}

// A run id becomes file names on the nodes and a line the holder reads.
bool IsPlainName(const std::string& name) {
  static const RE2* pattern = new RE2(R"([A-Za-z0-9._-]+)");
  return RE2::FullMatch(name, *pattern);
}

bool Decided(std::optional<absl::Status>* started) { return started->has_value(); }

}  // namespace

absl::StatusOr<int> AgentStep::Launch(SlurmConnection& connection, const std::string& host,
                                      const std::string& agent, const CommandSpec& command,
                                      const OutputCallback& on_output,
                                      const absl::Notification* cancel) {
  const std::string run_id = RunIdOf(command);
  if (!IsPlainName(run_id)) {
    return absl::InvalidArgumentError(absl::StrCat(
        host, ": a launch needs a --run-id (letters, digits, ._-), not \"", run_id, "\""));
  }
  const std::string& job = allocation_->job_id;
  CommandSpec task = command;
  task.launches_agent = false;
  task.env.emplace_back("FLEETPLAN_LAUNCH_REPORT", AgentReportPath(job, run_id, host));
  absl::Status written = connection.WriteFile(AgentScriptPath(job, run_id, host),
                                              absl::StrCat(StepScript(task), "\n"), 0700);
  std::vector<std::string> hosts;
  std::map<std::string, std::string> agents;
  {
    absl::MutexLock lock(&mu_);
    if (round_.run_id != run_id) round_ = Round{run_id};
    round_.hosts.push_back(host);
    round_.agents[host] = agent;
    if (!written.ok() && !round_.failed.has_value()) round_.failed = written;
    if (!written.ok()) return written;
    if (static_cast<int>(round_.hosts.size()) == hosts_ && !round_.failed.has_value()) {
      hosts = round_.hosts;
      agents = round_.agents;
    }
  }
  if (!hosts.empty()) {
    // The last to come starts the step for everyone.
    absl::Status started = Start(run_id, hosts, agents);
    absl::MutexLock lock(&mu_);
    round_.started = started;
  }
  {
    absl::MutexLock lock(&mu_);
    const absl::Time deadline = absl::Now() + kJoinWait;
    while (!round_.started.has_value()) {
      if (round_.failed.has_value()) {
        return absl::AbortedError(absl::StrCat(host, ": another node's launch failed: ",
                                               round_.failed->message()));
      }
      if (cancel != nullptr && cancel->HasBeenNotified()) {
        return absl::CancelledError(absl::StrCat(host, ": launch cancelled"));
      }
      if (absl::Now() >= deadline) {
        return absl::DeadlineExceededError(absl::StrCat(
            host, ": waited ", absl::FormatDuration(kJoinWait), " for ",
            hosts_ - static_cast<int>(round_.hosts.size()), " other nodes' launches"));
      }
      mu_.AwaitWithTimeout(absl::Condition(&Decided, &round_.started), kPoll);
    }
    if (!round_.started->ok()) return *round_.started;
  }
  CommandSpec await;
  await.command = AwaitAgentReportCommand(agent, job, run_id, host, kReportWait);
  return connection.Run(await, on_output, cancel);
}

absl::Status AgentStep::Start(const std::string& run_id, const std::vector<std::string>& hosts,
                              const std::map<std::string, std::string>& agents) {
  const std::string& job = allocation_->job_id;
  std::string script = AgentStepScript(job, hosts, run_id);
  if (!allocation_->owned) return StartDetachedHere(script, run_id);
  // The holder runs on the allocation's first host; that host's agent
  // hands it the script.
  const std::string& first = allocation_->hosts.front();
  auto agent = agents.find(first);
  if (agent == agents.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", job, "'s batch script runs on ", first,
        ", which holds no node of the spec and so no fleetplan-agent (apply --destroy releases "
        "the allocation, the next apply asks for one of the spec's nodes)"));
  }
  SlurmConnection holder(job, first, nullptr);
  std::string output;
  FP_ASSIGN_OR_RETURN(
      int status, holder.RunWithStdin(LaunchRequestCommand(agent->second, job, run_id, kHolderWait),
                                      script, &output, kHolderWait + absl::Seconds(30)));
  if (status != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(first, ": asking job ", job, "'s batch script to start the launch agents ",
                     "failed (exit ", status, "): ", output));
  }
  return absl::OkStatus();
}

absl::Status AgentStep::StartDetachedHere(const std::string& script, const std::string& run_id) {
  // The allocation's owner (an salloc shell, a batch script) runs here too:
  // the srun lives in a session of its own for as long as the allocation.
  std::string dir = LaunchDir(allocation_->job_id);
  FP_RETURN_IF_ERROR(MakeDirs(dir));
  std::string path = absl::StrCat(dir, "/launch-", run_id, ".sh");
  FP_RETURN_IF_ERROR(WriteFileAtomic(path, script, 0700));
  std::string log = absl::StrCat(dir, "/launch-", run_id, ".log");
  // Twice forked, in a session of its own from the first fork on: nothing
  // of apply's (its process group, its terminal, its end) reaches it. Only
  // async-signal-safe calls between fork and exec.
  // The launch's files on this machine go once srun ended well; what a
  // failed one said stays in launch-<run>.log.
  const char* argv[] = {"/bin/sh", "-c",
                        "/bin/sh \"$0\"; r=${0%.sh}; if [ \"$(cat \"$r.exit\")\" = 0 ]; then "
                        "rm -f \"$0\" \"$r.exit\" \"$r.log\"; rmdir \"${0%/*}\" 2>/dev/null; fi; "
                        "exit 0",
                        path.c_str(), nullptr};
  const long max_fd = sysconf(_SC_OPEN_MAX);
  pid_t first = fork();
  if (first < 0) return absl::InternalError("fork failed");
  if (first == 0) {
    setsid();
    pid_t second = fork();
    if (second != 0) _exit(second < 0 ? 1 : 0);
    int in = open("/dev/null", O_RDONLY);
    int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0) _exit(1);
    dup2(in, STDIN_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    // Nothing of apply's stays open: another step's pipe would not end.
    for (long fd = STDERR_FILENO + 1; fd < max_fd; ++fd) close(static_cast<int>(fd));
    execv(argv[0], const_cast<char* const*>(argv));
    _exit(127);
  }
  int status = 0;
  while (waitpid(first, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError("starting the launch agents' srun failed (fork)");
  }
  return absl::OkStatus();
}

}  // namespace fleetplan
