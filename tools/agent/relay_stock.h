#ifndef FLEETPLAN_TOOLS_AGENT_RELAY_STOCK_H_
#define FLEETPLAN_TOOLS_AGENT_RELAY_STOCK_H_

// What a relaying node can pass on, entry by entry of the manifest: the
// files it already holds in its tree, and those it is receiving as far as
// it has written them. One thread receives and says how far it got; the
// threads serving the node's children wait on it, so a child reads a big
// file while its parent still writes it (a pipeline, chunk by chunk,
// rather than store-and-forward at every hop).

#include <cstdint>
#include <optional>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tools/sync/manifest.h"

namespace fleetplan {

class RelayStock {
 public:
  // The manifest (its text as received, to pass on as is) is known; entry
  // i is already in place under `root` where `held[i]`, else it will be
  // received. Empty `held`: every entry is held (the chief's synced tree).
  void SetManifest(const std::string& root, std::string text, Manifest manifest,
                   std::vector<bool> held);

  // The receiving side. Receiving: entry `index` is being written at
  // `temporary`, from its first byte (again, after a source broke off:
  // the content is the same, so a child's stream goes on where it was).
  void Receiving(size_t index, std::string temporary);
  void Wrote(size_t index, uint64_t bytes);
  // Renames the whole temporary into its place under the root. Under the
  // stock's lock, as a server opens the file by the name it has: one that
  // has not seen the rename yet would find no temporary. The rename's
  // error, if any (the entry is then dropped).
  absl::Status Place(size_t index);
  // A source broke off mid-file: the temporary is removed (under the lock,
  // for the same reason), and the entry waits to be received again.
  void Dropped(size_t index);
  // The receive ended: `ok`, or this node will not hold the tree, and its
  // children's streams break off (they turn to their next source).
  void Ended(bool ok);

  // The serving side. The manifest text, once known; Unavailable when the
  // receive failed first or `deadline` passed.
  absl::StatusOr<std::string> WaitForManifest(absl::Time deadline);
  size_t entries() const;
  // The receive ended (nullopt: still going), and how.
  std::optional<bool> ended() const;
  // Sends entry `index`'s bytes to `socket` as they are written, each wait
  // for more at most `stall`. Unavailable for the socket or a receive that
  // failed; DataLoss for a held file of another size than listed.
  absl::Status Send(const std::function<absl::Status(absl::string_view)>& send, size_t index,
                    absl::Duration stall);

 private:
  struct Entry {
    std::string path;          // where to read it; empty: not yet
    uint64_t available = 0;    // bytes written there so far
    bool complete = false;     // in place, `size` bytes
    int generation = 0;        // a new temporary file each time it restarts
  };
  // Waits until entry `index` moved past `generation`/`offset`.
  bool AwaitProgress(size_t index, int generation, uint64_t offset, absl::Duration stall)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  absl::CondVar changed_;
  std::string root_ ABSL_GUARDED_BY(mu_);
  std::optional<std::string> text_ ABSL_GUARDED_BY(mu_);
  Manifest manifest_ ABSL_GUARDED_BY(mu_);
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::optional<bool> ended_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_RELAY_STOCK_H_
