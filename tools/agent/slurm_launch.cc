#include "tools/agent/slurm_launch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "tools/process/files.h"

namespace fleetplan {
namespace {

bool IsFifo(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISFIFO(info.st_mode);
}

bool Exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "this host";
  return name;
}

// Writes `line` to the FIFO once a reader holds it (the batch script keeps
// it open); false when none does by `deadline`.
bool NameToReader(const std::string& fifo, const std::string& line, absl::Time deadline,
                  absl::Duration poll) {
  while (true) {
    int fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      // Shorter than PIPE_BUF: written whole or not at all.
      bool written = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
      close(fd);
      return written;
    }
    if (errno != ENXIO || absl::Now() >= deadline) return false;
    absl::SleepFor(poll);
  }
}

// What the step's end says when it came before the report.
int StepEndedFirst(const AgentSlurmAwait& await, std::FILE* out) {
  absl::StatusOr<std::string> status = ReadFileToString(await.step_exit);
  std::string said = status.ok() ? std::string(absl::StripAsciiWhitespace(*status)) : "?";
  std::fprintf(out,
               "%s: the launch agents' job step ended (srun exit %s) before this node's agent "
               "said anything:\n",
               await.host.c_str(), said.c_str());
  if (absl::StatusOr<std::string> log = ReadFileToString(await.step_log); log.ok()) {
    std::fputs(log->c_str(), out);
  }
  return 1;
}

// The report's words on `out`; its first line the status.
int SayReport(const AgentSlurmAwait& await, std::FILE* out) {
  absl::StatusOr<std::string> report = ReadFileToString(await.report);
  if (!report.ok()) {
    std::fprintf(out, "%s: %s\n", await.host.c_str(),
                 std::string(report.status().message()).c_str());
    return 1;
  }
  size_t newline = report->find('\n');
  int status = 0;
  if (!absl::SimpleAtoi(report->substr(0, newline), &status) || status < 0 || status > 255) {
    std::fprintf(out, "%s: the launch agent's report %s has no status on its first line\n",
                 await.host.c_str(), await.report.c_str());
    return 1;
  }
  if (newline != std::string::npos) std::fputs(report->c_str() + newline + 1, out);
  return status;
}

}  // namespace

int HandLaunchToHolder(const AgentSlurmRequest& request, absl::string_view script,
                       std::FILE* err, absl::Duration poll) {
  const std::string fifo = absl::StrCat(request.dir, "/requests");
  const absl::Time deadline = absl::Now() + request.timeout;
  while (!IsFifo(fifo)) {
    if (absl::Now() >= deadline) {
      std::fprintf(err, "%s: no fleetplan batch script waiting in %s after %s\n",
                   HostName().c_str(), request.dir.c_str(),
                   absl::FormatDuration(request.timeout).c_str());
      return 1;
    }
    absl::SleepFor(poll);
  }
  const std::string path = absl::StrCat(request.dir, "/launch-", request.run_id, ".sh");
  if (absl::Status written = WriteFileAtomic(path, script, 0600); !written.ok()) {
    std::fprintf(err, "%s: %s\n", HostName().c_str(), std::string(written.message()).c_str());
    return 1;
  }
  if (!NameToReader(fifo, absl::StrCat(request.run_id, "\n"), deadline, poll)) {
    std::fprintf(err, "%s: no fleetplan batch script reads %s (%s)\n", HostName().c_str(),
                 fifo.c_str(), std::strerror(errno));
    return 1;
  }
  return 0;
}

int AwaitLaunchReport(const AgentSlurmAwait& await, std::FILE* out, absl::Duration poll) {
  const absl::Time deadline = absl::Now() + await.timeout;
  // The agent writes its report whole (a temporary file renamed).
  while (!Exists(await.report)) {
    if (!await.step_exit.empty() && Exists(await.step_exit)) return StepEndedFirst(await, out);
    if (absl::Now() >= deadline) {
      std::fprintf(out,
                   "%s: no word from the launch agent within %s of its job step's start (see "
                   "squeue -s)\n",
                   await.host.c_str(), absl::FormatDuration(await.timeout).c_str());
      return 1;
    }
    absl::SleepFor(poll);
  }
  return SayReport(await, out);
}

}  // namespace fleetplan
