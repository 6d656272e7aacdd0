#include "plugins/slurm/allocation.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "plugins/slurm/job_lookup.h"
#include "plugins/slurm/slurm_commands.h"
#include "plugins/slurm/temp_input.h"
#include "tools/process/subprocess.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

// The client commands answer within Slurm's MessageTimeout; a controller
// that does not is reported, not waited for.
constexpr absl::Duration kClientTimeout = absl::Seconds(30);
// How long a granted job may stay CONFIGURING, or a cancelled one COMPLETING.
constexpr absl::Duration kSettleTimeout = absl::Seconds(60);
constexpr absl::Duration kPoll = absl::Milliseconds(100);

// Runs a Slurm client command; its output, or Unavailable with its words.
absl::StatusOr<std::string> RunClient(std::vector<std::string> argv,
                                      absl::Duration timeout = kClientTimeout) {
  std::string name = argv[0];
  SubprocessOptions options;
  options.argv = std::move(argv);
  absl::StatusOr<Completed> done = RunToCompletion(options, timeout);
  if (!done.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(name, " cannot run (install slurm-client): ", done.status().message()));
  }
  if (done->timed_out) {
    return absl::DeadlineExceededError(absl::StrCat(name, " did not finish within ",
                                                    absl::FormatDuration(timeout)));
  }
  if (done->status != 0) {
    return absl::UnavailableError(absl::StrCat(
        name, " failed (exit ", done->status, "): ", absl::StripAsciiWhitespace(done->output)));
  }
  return done->output;
}

absl::StatusOr<std::vector<std::string>> Hostnames(const std::string& nodelist) {
  if (std::optional<std::vector<std::string>> hosts = ExpandHostlist(nodelist)) return *hosts;
  absl::StatusOr<std::string> out = RunClient({"scontrol", "show", "hostnames", nodelist});
  if (!out.ok()) return out.status();
  return OutputLines(*out);
}

absl::StatusOr<std::optional<AllocationRow>> Squeue(const std::string& job_name) {
  // In process first; squeue where the API cannot be used.
  absl::StatusOr<std::optional<AllocationRow>> looked_up = LookUpJob(job_name);
  if (looked_up.ok()) return looked_up;
  absl::StatusOr<std::string> out = RunClient(SqueueArgv(job_name));
  if (!out.ok()) return out.status();
  return ParseSqueue(*out);
}

absl::StatusOr<std::optional<AllocationRow>> SqueueJob(const std::string& job_id) {
  absl::StatusOr<std::string> out =
      RunClient({"squeue", "--noheader", absl::StrCat("--jobs=", job_id), "--format=%i %T %N"});
  // squeue refuses a job id it no longer knows: gone.
  if (!out.ok()) return std::optional<AllocationRow>();
  return ParseSqueue(*out);
}

}  // namespace

absl::StatusOr<std::optional<Allocation>> FindAllocation(const std::string& job_name) {
  const char* inside = std::getenv("SLURM_JOB_ID");
  absl::Time deadline = absl::Now() + kSettleTimeout;
  for (;;) {
    absl::StatusOr<std::optional<AllocationRow>> row =
        inside != nullptr ? SqueueJob(inside) : Squeue(job_name);
    if (!row.ok()) return row.status();
    if (!row->has_value() || (*row)->state == "COMPLETING" || (*row)->state == "CANCELLED") {
      return std::optional<Allocation>();
    }
    if ((*row)->state == "RUNNING") {
      absl::StatusOr<std::vector<std::string>> hosts = Hostnames((*row)->nodelist);
      if (!hosts.ok()) return hosts.status();
      return std::optional<Allocation>(Allocation{(*row)->job_id, *hosts, inside == nullptr});
    }
    if (absl::Now() >= deadline) {
      return absl::UnavailableError(absl::StrCat("job ", (*row)->job_id, " (", job_name,
                                                 ") is ", (*row)->state, ", not running"));
    }
    absl::SleepFor(kPoll);
  }
}

absl::Status CheckCanAllocate(const SlurmSettings& settings, int count) {
  absl::StatusOr<std::string> out = RunClient({"sinfo", "--noheader", "--format=%P %D %G"});
  if (!out.ok()) return out.status();
  return CheckPartition(ParseSinfo(*out), settings, count);
}

absl::StatusOr<Allocation> Allocate(const SlurmSettings& settings, const std::string& job_name,
                                    int count, const std::vector<std::string>& nodelist,
                                    absl::Duration wait) {
  FP_ASSIGN_OR_RETURN(TempInput script, TempInput::Of(HolderScript()));
  std::vector<std::string> argv = SbatchArgv(settings, job_name, count, nodelist);
  argv.push_back(script.path());
  absl::StatusOr<std::string> submitted = RunClient(argv);
  if (absl::IsUnavailable(submitted.status())) {
    return absl::FailedPreconditionError(submitted.status().message());
  }
  if (!submitted.ok()) return submitted.status();
  // "ID" or "ID;CLUSTER".
  std::string job_id(absl::StripAsciiWhitespace(submitted->substr(0, submitted->find(';'))));
  Allocation pending{job_id, {}, true};
  // Granted when it runs: until then the holder waits in the queue.
  absl::Time deadline = absl::Now() + wait;
  for (;;) {
    absl::StatusOr<std::optional<AllocationRow>> row = SqueueJob(job_id);
    if (!row.ok()) return row.status();
    if (!row->has_value()) {
      return absl::UnavailableError(
          absl::StrCat("job ", job_id, " (", job_name, ") left the queue before it ran"));
    }
    const AllocationRow& job = **row;
    if (job.state == "RUNNING") {
      absl::StatusOr<std::vector<std::string>> hosts = Hostnames(job.nodelist);
      if (!hosts.ok()) return hosts.status();
      return Allocation{job_id, *hosts, true};
    }
    if (job.state != "PENDING" && job.state != "CONFIGURING") {
      CancelAllocation(pending).IgnoreError();
      return absl::UnavailableError(
          absl::StrCat("job ", job_id, " (", job_name, ") is ", job.state, ", not running"));
    }
    if (absl::Now() >= deadline) {
      CancelAllocation(pending).IgnoreError();
      return absl::DeadlineExceededError(absl::StrCat(
          "job ", job_id, " (", job_name, ") was not granted within ",
          absl::FormatDuration(wait), " (", job.nodelist, "); cancelled"));
    }
    absl::SleepFor(kPoll);
  }
}

absl::Status CancelAllocation(const Allocation& allocation) {
  if (!allocation.owned) return absl::OkStatus();
  absl::StatusOr<std::string> cancelled = RunClient({"scancel", allocation.job_id});
  if (!cancelled.ok()) return cancelled.status();
  absl::Time deadline = absl::Now() + kSettleTimeout;
  for (;;) {
    absl::StatusOr<std::optional<AllocationRow>> row = SqueueJob(allocation.job_id);
    if (row.ok() && !row->has_value()) return absl::OkStatus();
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("job ", allocation.job_id, " still in squeue after scancel"));
    }
    absl::SleepFor(kPoll);
  }
}

}  // namespace fleetplan
