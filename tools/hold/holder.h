#ifndef FLEETPLAN_TOOLS_HOLD_HOLDER_H_
#define FLEETPLAN_TOOLS_HOLD_HOLDER_H_

// The connection holder's life (`fleetplan __hold`, started detached by the
// first command that reaches a spec's nodes): it listens on its socket,
// serves each command that connects (HoldServer) from a thread of its own,
// and ends once no command was attached for the set's persist, on a quit,
// or when its socket is no longer the one at its path.

#include <string>

#include "absl/status/status.h"
#include "tools/hold/hold_folder.h"
#include "tools/hold/node_pool.h"

namespace fleetplan {

struct HolderOptions {
  std::string folder;  // private (HoldFolder): the socket and the spool
  HoldSet set;
  NodePool::Opener open;
};

// Listens and serves until it ends, then removes its socket and ends the
// process (exit 0): commands a quit leaves attached must not outlive what
// they use. Returns only when it cannot listen: AlreadyExists when another
// holder listens at the socket's path, Internal otherwise.
absl::Status RunHolder(const HolderOptions& options);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_HOLD_HOLDER_H_
