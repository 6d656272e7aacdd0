#ifndef FLEETPLAN_PLUGINS_SLURM_SLURM_COMMANDS_H_
#define FLEETPLAN_PLUGINS_SLURM_SLURM_COMMANDS_H_

// The Slurm commands the transport runs (sbatch, srun, squeue, sinfo,
// scancel) as argv, the shell text of the batch script that holds the
// allocation and of the launch agents' job step, and what it reads from
// their output. Pure: no I/O, so the exact options are unit-tested here and
// run for real in //tests:slurm_apply_test.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "plugins/slurm/slurm_settings.h"
#include "plugins/transport.h"

namespace fleetplan {

// The job name of `spec`'s allocation: how a later apply, status or stop
// finds it in squeue (no state is kept on this machine).
std::string AllocationJobName(const ClusterSpec& spec);

// sbatch of the holder script (HolderScript, on stdin) for `settings`,
// `count` nodes; `nodelist` (may be empty) names them. Prints the job id.
std::vector<std::string> SbatchArgv(const SlurmSettings& settings, const std::string& job_name,
                                    int count, const std::vector<std::string>& nodelist);

// The batch script of an allocation apply obtains. Slurm runs it on the
// allocation's first host for the allocation's whole life; it waits on a
// FIFO in LaunchDir for the name of a launch script apply wrote there
// (LaunchRequestCommand) and runs it, so the launch agents' job step
// (AgentStepScript) is started by, and outlives nothing but, the
// allocation itself: not apply, not the login node.
std::string HolderScript();

// The folder, on every host of job `job_id`, of the launch's files: the
// holder's FIFO (`requests`) and the launch scripts on the first host, each
// node's agent script and report.
std::string LaunchDir(const std::string& job_id);

// The command run on the holder's host with a launch script on stdin:
// that host's `agent` (fleetplan-agent slurm-request) puts it in LaunchDir
// as launch-<run>.sh and names it to the holder, once the holder is there
// (Slurm starts a batch script after its node's prolog, which may be a
// while after the job shows RUNNING): it waits up to `wait`.
std::string LaunchRequestCommand(const std::string& agent, const std::string& job_id,
                                 const std::string& run_id, absl::Duration wait);

// The launch script of run `run_id`: one job step over `hosts`, one task
// each, sharing the allocation with apply's own steps (--overlap); a task
// that ends badly ends the step on every host (--kill-on-bad-exit). Each
// task runs its host's agent script (AgentScriptPath). When srun ends, its
// status goes to launch-<run>.exit beside it.
std::string AgentStepScript(const std::string& job_id, const std::vector<std::string>& hosts,
                            const std::string& run_id);

// Where host `host`'s agent script and report of run `run_id` are.
std::string AgentScriptPath(const std::string& job_id, const std::string& run_id,
                            const std::string& host);
std::string AgentReportPath(const std::string& job_id, const std::string& run_id,
                            const std::string& host);

// The command run on `host` that waits for its agent's report (the agent
// writes it once its ranks started, or failed to: see
// FLEETPLAN_LAUNCH_REPORT in tools/agent/detached_launch.h) and prints it,
// exiting with its status: `agent` (fleetplan-agent slurm-await, the
// host's own). On the holder's host it also notices a step that ended
// before reporting (srun refused it). Gives up after `wait`.
std::string AwaitAgentReportCommand(const std::string& agent, const std::string& job_id,
                                    const std::string& run_id, const std::string& host,
                                    absl::Duration wait);

// The shell text a job step's task runs for `command`: the node's PATH and
// HOME (under --export=NONE a task holds only SLURM_*), `env` exported,
// `cwd` entered, then the command by /bin/sh.
std::string StepScript(const CommandSpec& command);

// squeue of this user's jobs named `job_name`: "ID STATE NODELIST" lines.
std::vector<std::string> SqueueArgv(const std::string& job_name);

// One task on `host` as a step of job `job_id`, sharing the allocation with
// the others (--overlap); the task ends the step if it fails
// (--kill-on-bad-exit). The task runs `command` with sh in the node's
// environment (not this machine's), `env` exported and `cwd` as its
// directory.
std::vector<std::string> StepArgv(const std::string& job_id, const std::string& host,
                                  const CommandSpec& command);

// One task on each of `hosts` of the job, output lines labelled "<task>: ".
std::vector<std::string> EveryNodeArgv(const std::string& job_id,
                                       const std::vector<std::string>& hosts,
                                       const std::string& command);

// An allocation as squeue shows it.
struct AllocationRow {
  std::string job_id;
  std::string state;     // RUNNING, PENDING, CONFIGURING, COMPLETING, ...
  std::string nodelist;  // compressed ("n-[0-2]"); "(Reason)" while pending
};

// The first "ID STATE NODELIST" line of squeue's output; nullopt for none.
std::optional<AllocationRow> ParseSqueue(absl::string_view output);

// A partition as sinfo shows it ("%P %D %G": name, node count, gres).
struct PartitionRow {
  std::string name;  // without the default's '*'
  bool is_default = false;
  int nodes = 0;
  int gpus_per_node = 0;  // from "gpu:N" or "gpu:TYPE:N" in the gres
};
std::vector<PartitionRow> ParseSinfo(absl::string_view output);

// Whether the partitions can give `count` nodes with `settings`'s GPUs:
// FailedPrecondition naming the partition (and the known ones, with a
// suggestion) when not.
absl::Status CheckPartition(const std::vector<PartitionRow>& partitions,
                            const SlurmSettings& settings, int count);

// The hosts of a Slurm hostlist ("n-[0-2,5]", "r[1-2]-g[01-02],login"),
// as `scontrol show hostnames` gives them; nullopt for a list this parser
// does not know (the caller then asks scontrol).
std::optional<std::vector<std::string>> ExpandHostlist(absl::string_view hostlist);

// Lines of output, trimmed, empty ones dropped.
std::vector<std::string> OutputLines(absl::string_view output);

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SLURM_SLURM_COMMANDS_H_
