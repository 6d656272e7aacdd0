#ifndef FLEETPLAN_TOOLS_AGENT_PREFLIGHT_H_
#define FLEETPLAN_TOOLS_AGENT_PREFLIGHT_H_

// A node's preflight checks, run by the launch agent
// (`fleetplan-agent preflight --request=<json>`, tools/protocol/preflight_request.h)
// in the ranks' environment: the plan's shell preamble activates the python
// env and exports what env.sh exports, then runs the agent. Each check
// prints one line of tools/protocol/check_line.h with one of three
// outcomes: ok, fail (what was found, what was expected, the fix), or skip
// saying what could not be determined and why. Nothing this code cannot
// establish is ever reported ok.
//
//   workdir    writable at its absolute path (statvfs: not read-only, room
//              for the sync less what an earlier sync left there);
//   python     the venv or conda env the preamble activated (or why not);
//   port       (chief) master_port and supervisor_port can be bound; both
//              are served until every node has connected; fact
//              `listening <master_port> <supervisor_port>`;
//   connect    TCP to the chief at both ports;
//   nccl       the interface (getifaddrs) holding the node's address as
//              resolved here (getaddrinfo); never lo or docker0; fact
//              `nccl_socket_ifname <interface>`, and in apply mode
//              NCCL_SOCKET_IFNAME written to the node's preflight.env;
//   gpus       every listed id is one nvidia-smi (on the ranks' PATH) lists;
//   libraries  shared_libraries.h; fact `libtorch <xxh3-128> <size> <path>`
//              for the libtorch_cpu the program loads.

#include <cstdio>
#include <string>
#include <vector>

#include "tools/protocol/check_line.h"
#include "tools/agent/workdir_check.h"  // CheckWorkdir
#include "tools/protocol/preflight_request.h"

namespace fleetplan {

// What the preamble's python activation did.
struct Activation {
  enum class Outcome { kNotRun, kOk, kFailed };
  Outcome outcome = Outcome::kNotRun;
  std::string output;  // what it printed, when it failed
};

// Runs every check of `request`, printing each line to `out` as it is
// known. `stop_fd` (the chief) reaching end-of-file means every other node
// is done with its connect check. Returns 1 when a check failed, else 0.
int RunPreflight(const PreflightRequest& request, const Activation& activation, int stop_fd,
                 std::FILE* out);

// The checks one by one, for tests. Each returns its result; the facts a
// check reports go to `facts` where it takes one.
CheckResult CheckPython(const PreflightRequest& request, const Activation& activation);
CheckResult CheckConnect(const PreflightRequest& request);
CheckResult CheckNccl(const PreflightRequest& request,
                      std::vector<std::pair<std::string, std::string>>* facts);
// Looks for nvidia-smi on `path` (a PATH value).
CheckResult CheckGpus(const std::vector<int>& gpus, const std::string& path);

// The libtorch fact's value for the library at `path` (a link is followed):
// "<xxh3-128 hex> <size> <resolved path>". The errno's message when it
// cannot be read.
absl::StatusOr<std::string> LibtorchIdentity(const std::string& path);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_PREFLIGHT_H_
