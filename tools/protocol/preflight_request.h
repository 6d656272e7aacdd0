#ifndef FLEETPLAN_TOOLS_PROTOCOL_PREFLIGHT_REQUEST_H_
#define FLEETPLAN_TOOLS_PROTOCOL_PREFLIGHT_REQUEST_H_

// What a node's preflight checks are asked to check: the plan writes it as
// one JSON argument, `fleetplan-agent preflight --request=<json>`, and the launch
// agent runs the checks (tools/agent/preflight.h), printing the lines of
// check_line.h. The agent runs in the ranks' environment (the python
// activation and the exports of env.sh), which the plan's small shell
// preamble sets up first.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fleetplan {

struct PreflightRequest {
  // `plan --check`: nothing is written; a program not there yet is a skip.
  bool check_only = false;

  // workdir: writable at this absolute path, with room for `sync_bytes`
  // less the sizes listed in `manifest` (what an earlier sync left; ""
  // for none). In apply mode `state_dir` is created first.
  std::string workdir;
  std::string state_dir;
  uint64_t sync_bytes = 0;
  std::string manifest;

  // port (the chief, listen_for > 0): master_port and supervisor_port can
  // be bound; each is then served until `listen_for` nodes have connected.
  // connect (every node): TCP to chief_address at both ports.
  int listen_for = 0;
  std::string chief_address;
  int master_port = 0;
  int supervisor_port = 0;
  absl::Duration connect_timeout = absl::Seconds(30);

  // nccl (nccl_socket_ifname = "auto"; empty: no check): the interface
  // holding `nccl_address`; written to `nccl_env_file` in apply mode.
  std::string nccl_address;
  std::string nccl_env_file;

  // python: at most one of `venv` and `conda` (with `conda_sh`).
  std::string venv;
  std::string conda;
  std::string conda_sh;

  // gpus (empty: no check): ids nvidia-smi must list.
  std::vector<int> gpus;

  // libraries: the job's program, whose shared libraries must resolve.
  std::string program;
};

// One line of JSON.
std::string PreflightRequestToJson(const PreflightRequest& request);

// InvalidArgument naming the first field that is missing or wrong.
absl::StatusOr<PreflightRequest> PreflightRequestFromJson(absl::string_view text);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_PREFLIGHT_REQUEST_H_
