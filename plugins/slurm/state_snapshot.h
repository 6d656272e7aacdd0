#ifndef FLEETPLAN_PLUGINS_SLURM_STATE_SNAPSHOT_H_
#define FLEETPLAN_PLUGINS_SLURM_STATE_SNAPSHOT_H_

// What a node holds of fleetplan's own state (its folder
// <workdir>/.fleetplan/nodes/<node>/: step records, manifest, env.sh,
// logs/job.json; not the rank logs), read in one job step and kept until
// something may have changed it. Every srun costs a step's round trip
// through slurmctld and slurmd; an apply that changes nothing reads a
// record per phase, the manifest and the job's state, and this makes those
// reads one step per node.

#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

// The node-state folder that `path` lies in ("<w>/.fleetplan/nodes/<n>"),
// or "" when it lies in none.
std::string StateFolderOf(absl::string_view path);

// The sh command that prints every snapshotted file under `folder` as
// "<size> <path>\n" followed by its bytes.
std::string SnapshotCommand(const std::string& folder);

// Whether a snapshot of `folder` holds `path` (rank logs are left out).
bool SnapshotCovers(absl::string_view folder, absl::string_view path);

// The file of a state folder that names the allocation whose job step
// last read it (state_here.h: how this machine knows it sees the nodes'
// folder).
inline constexpr char kAllocationMarkName[] = "slurm-job";

// The sh lines, run in a job step's task, that leave the step's job id
// ($SLURM_JOB_ID) in `folder` (made, 0700, when missing); no program runs
// when the mark is there already.
std::string MarkFolderCommand(const std::string& folder);

// The sh command that, run as one task on each host of a job step (srun
// --label), leaves the allocation's mark in its folder, prints for the host it runs on
// ($SLURMD_NODENAME) "@host NAME", SnapshotCommand's output in base64 lines short enough that srun
// passes each whole, and "@end": `folders` maps hosts to their folder.
std::string EveryHostSnapshotCommand(const std::map<std::string, std::string>& folders);

class StateSnapshot;

// The snapshots of EveryHostSnapshotCommand's output ("<task>: " before
// every line), by host; hosts whose lines are missing, cut short or garbled
// are left out (their reads go to the node).
std::map<std::string, StateSnapshot> ParseEveryHostSnapshot(
    const std::map<std::string, std::string>& folders, absl::string_view output);

class StateSnapshot {
 public:
  // Parses what SnapshotCommand printed for `folder`. InvalidArgument for
  // output it did not print.
  static absl::StatusOr<StateSnapshot> Parse(const std::string& folder, absl::string_view output);
  // The snapshot of `folder` holding `files` (whole paths to contents).
  static StateSnapshot Of(std::string folder, std::map<std::string, std::string> files);
  StateSnapshot() = default;

  const std::string& folder() const { return folder_; }
  // The file's content. What only apply writes (step records, manifest,
  // env.sh) is answered as often as asked: apply drops the snapshot when it
  // writes. logs/job.json is answered once: the agent rewrites it as the
  // job goes, so a second read must go to the node. nullopt when the folder
  // had no such file, or its job.json was read already (`*answered` says
  // which).
  std::optional<std::string> Take(const std::string& path, bool* answered);

  // True when the snapshot says `path` holds `content` (not for job.json).
  bool Holds(const std::string& path, absl::string_view content) const;
  // Records that apply wrote `content` to `path` in the snapshot's folder.
  void Wrote(const std::string& path, absl::string_view content);

 private:
  std::string folder_;
  std::map<std::string, std::string> files_;
  std::set<std::string> taken_;  // paths answered already
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SLURM_STATE_SNAPSHOT_H_
