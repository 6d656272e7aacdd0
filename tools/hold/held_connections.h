#ifndef FLEETPLAN_TOOLS_HOLD_HELD_CONNECTIONS_H_
#define FLEETPLAN_TOOLS_HOLD_HELD_CONNECTIONS_H_

// Connections through the spec's connection holder, as OpenSSH's
// ControlPersist keeps its master connection: the first command that
// reaches a spec's nodes starts a holder (holder_start.h) and the nodes'
// connections stay open in it; later commands on the same nodes go through
// it (a unix socket on this machine instead of a TCP connection, a key
// exchange and a login per node). A node whose transport holds nothing
// (Transport::Holding) is connected directly; so is every node where no
// holder can be had (a folder others may enter, a holder that does not
// start or refuses the node): the command works as it would without one.

#include "tools/apply/connect_nodes.h"

namespace fleetplan {

const ConnectionFactory& HeldConnections();

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_HOLD_HELD_CONNECTIONS_H_
