#ifndef FLEETPLAN_TOOLS_CLI_SIGNALS_H_
#define FLEETPLAN_TOOLS_CLI_SIGNALS_H_

// SIGINT and SIGTERM for the commands: blocked in every thread and turned
// into a call of the current handler from a thread of its own, never from
// signal context.

#include <functional>

namespace fleetplan {

// Starts watching (once per process; call before starting other threads,
// which inherit the blocked signals). `handler` is called for each signal
// from then on; an empty one ignores them.
void OnInterrupt(std::function<void()> handler);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_SIGNALS_H_
