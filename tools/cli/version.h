#ifndef FLEETPLAN_TOOLS_CLI_VERSION_H_
#define FLEETPLAN_TOOLS_CLI_VERSION_H_

namespace fleetplan {

// fleetplan's version: `fleetplan version`, the man pages, the .deb.
inline constexpr char kFleetplanVersion[] = "0.1.0";

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_VERSION_H_
