#ifndef FLEETPLAN_TOOLS_HOLD_HOLD_FOLDER_H_
#define FLEETPLAN_TOOLS_HOLD_HOLD_FOLDER_H_

// Where the connection holder's socket lives, and what names it: a folder
// only its user can enter, and a digest of everything that identifies the
// connections held, so that a holder made for other addresses, users or
// keys is another socket.

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "plugins/transport.h"
#include "tools/protocol/hold_wire.h"

namespace fleetplan {

// `$XDG_RUNTIME_DIR/fleetplan`, else `$XDG_CACHE_HOME/fleetplan/hold`, else
// `~/.cache/fleetplan/hold`, made 0700 where missing. PermissionDenied
// when it is not a folder of this user's that nobody else may enter
// (owner, mode, or a symbolic link): nothing is kept in it then.
absl::StatusOr<std::string> HoldFolder();

// The check HoldFolder makes of an existing folder, for `uid`.
absl::Status CheckPrivateFolder(const std::string& path, uid_t uid);

// The connections a spec's holder keeps: node name → its HoldKey.
struct HoldSet {
  std::map<std::string, HoldKey> nodes;
  // The digest of the holder's wire version (`wire`, hold_wire.h's
  // greeting) and every node's name and identity: the holder's own. A
  // holder of another version is another holder with a socket of its own,
  // not one that refuses this version's commands for as long as they keep
  // it from being idle.
  std::string Identity(absl::string_view wire = kHoldGreeting) const;
  // The longest persist among the nodes: how long the holder stays idle.
  absl::Duration Persist() const;
};

// The nodes of `spec` whose transports let their connections be held.
HoldSet HoldSetOf(const ClusterSpec& spec, const TransportOptions& options);

// `folder`/<identity>.sock, and its log and lock beside it.
std::string HoldSocketPath(const std::string& folder, const std::string& identity);
std::string HoldLogPath(const std::string& folder, const std::string& identity);
std::string HoldLockPath(const std::string& folder, const std::string& identity);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_HOLD_HOLD_FOLDER_H_
