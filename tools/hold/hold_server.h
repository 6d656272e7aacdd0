#ifndef FLEETPLAN_TOOLS_HOLD_HOLD_SERVER_H_
#define FLEETPLAN_TOOLS_HOLD_HOLD_SERVER_H_

// The holder's side of one command's socket connection
// (tools/protocol/hold_wire.h): who connected is checked before a byte is
// read, then the attach names the node and the identity the command
// expects; every request after it is performed on a connection of the
// node pool taken for this command alone (through the node's agent where
// one answers: held_node.h), and answered as the node's agent answers it
// in an apply session.

#include <sys/types.h>

#include <string>

#include "tools/hold/hold_folder.h"
#include "tools/hold/node_pool.h"

namespace fleetplan {

class HoldServer {
 public:
  // `spool` is a private folder for files on their way to a node.
  HoldServer(HoldSet set, NodePool& pool, std::string spool, uid_t uid)
      : set_(std::move(set)), identity_(set_.Identity()), pool_(pool),
        spool_(std::move(spool)), uid_(uid) {}

  // Serves the command connected on `fd` until it closes its end; closes
  // `fd`. True when the command asked the holder to end (a quit with the
  // holder's identity).
  bool Serve(int fd);

 private:
  HoldSet set_;
  std::string identity_;
  NodePool& pool_;
  std::string spool_;
  uid_t uid_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_HOLD_HOLD_SERVER_H_
