#ifndef FLEETPLAN_PLUGINS_SLURM_STATE_HERE_H_
#define FLEETPLAN_PLUGINS_SLURM_STATE_HERE_H_

// A node's state folder read on this machine, the login node apply runs
// on, with no job step: most clusters mount home or scratch on the login
// node at the same path as on the nodes, and a job step costs as much as
// everything else an unchanged apply does. Proof that a folder seen here is
// the nodes' own: every job step that reads a host's folder
// (MarkFolderCommand, state_snapshot.h) leaves in it the id of the allocation it ran
// in, so a folder here that names this allocation was written by its
// nodes (job ids are not reused while a job lives). A folder seen here
// must also be this user's and closed to others (0700, as apply makes it),
// reached with no symbolic link below the workdir: one that another user
// could write would let them answer for the nodes.

#include <string>

#include "absl/status/statusor.h"
#include "plugins/slurm/state_snapshot.h"

namespace fleetplan {

// `folder` (a node-state folder: "<workdir>/.fleetplan/nodes/<node>") as
// this machine sees it, when that is allocation `job_id`'s: the files a
// SnapshotCommand would print. FailedPrecondition saying why not (no such
// folder here, another allocation's mark, another owner, open to others).
absl::StatusOr<StateSnapshot> ReadStateFolderHere(const std::string& folder,
                                                  const std::string& job_id);

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SLURM_STATE_HERE_H_
