#ifndef FLEETPLAN_TOOLS_HOLD_HELD_STREAM_H_
#define FLEETPLAN_TOOLS_HOLD_HELD_STREAM_H_

// A command stream on a node opened through the connection holder
// (hold_wire.h's open): the launch agent's apply session of a held node
// goes through the holder's connection this way.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "plugins/transport.h"
#include "tools/protocol/hold_wire.h"

namespace fleetplan {

// Connects to the holder at `socket`, attaches as `attach` says and opens
// `command` on the node. A holder that refuses, or a command that cannot
// start, gives a stream that ends at once with why in its ErrorOutput.
// Unavailable when the socket cannot be reached.
absl::StatusOr<std::unique_ptr<CommandStream>> OpenHeldStream(const std::string& socket,
                                                              const HoldAttach& attach,
                                                              const std::string& command);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_HOLD_HELD_STREAM_H_
