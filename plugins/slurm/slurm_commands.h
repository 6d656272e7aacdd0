#ifndef FLEETPLAN_PLUGINS_SLURM_SLURM_COMMANDS_H_
#define FLEETPLAN_PLUGINS_SLURM_SLURM_COMMANDS_H_

// The Slurm commands the transport runs (salloc, srun, squeue, sinfo,
// scancel) as argv, and what it reads from their output. Pure: no I/O, so
// the exact options are unit-tested here and run for real in
// slurm_transport_test.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "plugins/slurm/slurm_settings.h"
#include "plugins/transport.h"

namespace fleetplan {

// The job name of `spec`'s allocation: how a later apply, status or stop
// finds it in squeue (no state is kept on this machine).
std::string AllocationJobName(const ClusterSpec& spec);

// salloc --no-shell for `settings`, `count` nodes; `nodelist` (may be
// empty) names them.
std::vector<std::string> SallocArgv(const SlurmSettings& settings, const std::string& job_name,
                                    int count, const std::vector<std::string>& nodelist);

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
