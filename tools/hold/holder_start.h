#ifndef FLEETPLAN_TOOLS_HOLD_HOLDER_START_H_
#define FLEETPLAN_TOOLS_HOLD_HOLDER_START_H_

// Finding a spec's connection holder, starting one, ending one. Starting: one command at a
// time (a lock file beside the socket), a socket where nothing listens (a
// killed holder) removed first, the holder started detached from this
// command (its own session, stdio to its log) and awaited until it listens.

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/hold/hold_folder.h"

namespace fleetplan {

// The socket of a holder of `set` for the spec at `spec_path`, started by
// running this executable as `fleetplan __hold --identity=ID SPEC` when
// none listens. PermissionDenied for a folder others may enter;
// DeadlineExceeded when the holder did not listen within `wait`.
absl::StatusOr<std::string> FindOrStartHolder(const HoldSet& set, const std::string& spec_path,
                                              absl::Duration wait = absl::Seconds(5));

// The socket of a running holder of `set`; NotFound when none listens.
absl::StatusOr<std::string> FindHolder(const HoldSet& set);

// Asks the running holder of `set` to end (`fleetplan disconnect`) and
// waits until its socket is gone. NotFound when none listens.
absl::Status EndHolder(const HoldSet& set);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_HOLD_HOLDER_START_H_
