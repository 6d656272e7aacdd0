#ifndef FLEETPLAN_TOOLS_SYNC_SYNC_TREE_H_
#define FLEETPLAN_TOOLS_SYNC_SYNC_TREE_H_

// Incremental tree sync over any transport's Connection: only files whose
// size, mode or digest differ from the manifest the node recorded last time
// are sent, files gone from the source are removed, and the new manifest is
// written last, so an interrupted sync is redone on the next apply.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "plugins/transport.h"
#include "tools/sync/manifest.h"

namespace fleetplan {

struct SyncResult {
  int files_sent = 0;
  uint64_t bytes_sent = 0;
  // What of it left this machine: less on a workdir the nodes share, where
  // another node's sync may have put the files already.
  uint64_t bytes_from_here = 0;
  int files_removed = 0;
  // True when a file added from outside the source tree (a built binary,
  // the agent) was sent or removed.
  bool extras_changed = false;
  // The paths sent and removed.
  std::vector<std::string> changed_paths;
  bool changed() const { return files_sent > 0 || files_removed > 0; }
};

// The paths `diff` sends or removes, and whether an extra is among them.
void NoteChanges(const ManifestDiff& diff, SyncResult* result);

// Called with the number of bytes a sync is about to send, before it sends
// anything; an error stops the sync and is returned as it is.
using BeforeSend = std::function<absl::Status(uint64_t bytes)>;

struct SyncOptions {
  // Send everything, as if the node had recorded nothing.
  bool ignore_recorded = false;
  // What the node recorded, when the caller has read it already (not owned;
  // null: read it).
  const Manifest* recorded = nullptr;
  // Runs only when there is something to send (may be empty).
  BeforeSend before_send;
  // The launch agent on the node (absolute; empty: no check). After a sync
  // that changed something it checks every file under the root against
  // the new manifest (`fleetplan-agent verify-tree`), so what the ranks
  // run is what was sent.
  std::string verifier;
  // Shell text run on the node right after the verifier passed, in the
  // same command (one round trip fewer: apply records the step there).
  std::string after_verify;
  // Runs the verifier (and after_verify's record) on the node in another
  // way than a command (apply's agent session, which checks in the agent
  // itself): the verifier's exit status, its report in `*output`. Empty:
  // the command above.
  std::function<absl::StatusOr<int>(std::string* output)> verify_on_node;
  // Stops the verifier early (may be null), and how long it may run.
  const absl::Notification* cancel = nullptr;
  absl::Duration verify_timeout = absl::InfiniteDuration();
};

// Makes `remote_root` on the node hold the files of `local`. The node's
// previous manifest is read from `manifest_path` (missing or unreadable:
// everything is sent). Errors from the connection are returned with the
// node's root named. A tree that fails the verifier's check is DataLoss
// naming the files, and the recorded manifest is emptied so that the next
// sync sends everything.
absl::StatusOr<SyncResult> SyncTree(Connection& connection, const Manifest& local,
                                    const std::string& remote_root,
                                    const std::string& manifest_path,
                                    const SyncOptions& options = {});

// The manifest the node recorded at `manifest_path`; an empty one when it
// has none or it cannot be parsed (resending is always safe). Errors only
// when the node cannot be read.
absl::StatusOr<Manifest> ReadRecordedManifest(Connection& connection,
                                              const std::string& manifest_path);

// What a sync of `local` would send to and remove from the node, against
// the manifest it recorded at `manifest_path` (everything with
// `ignore_recorded`, or when there is none or it cannot be parsed). The
// relay uses it to size and check a node before the node fetches its part.
absl::StatusOr<ManifestDiff> DiffWithRecorded(Connection& connection, const Manifest& local,
                                              const std::string& manifest_path,
                                              bool ignore_recorded);

// InvalidArgument when syncing `source` to `destination` would write into
// the source itself: the same folder, or one inside the other. Paths are
// compared lexically after normalising "." , ".." and repeated slashes.
absl::Status CheckSyncTarget(const std::string& source,
                             const std::string& destination);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SYNC_SYNC_TREE_H_
