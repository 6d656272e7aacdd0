#ifndef FLEETPLAN_TOOLS_CLI_DASHBOARD_SERVER_H_
#define FLEETPLAN_TOOLS_CLI_DASHBOARD_SERVER_H_

// The dashboard's HTTP server (cpp-httplib): the page and its assets
// (built into the binary), /api/top, /api/metrics, /api/logs and POST
// /api/stop, on 127.0.0.1 only. Every request must name 127.0.0.1:PORT
// (or localhost:PORT) as its Host and carry the run's token
// (dashboard_api.h); others get 403 and reach no handler.

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tools/cli/dashboard_api.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace fleetplan {

// What the endpoints act on: the job, as the dashboard reaches it.
class DashboardBackend {
 public:
  virtual ~DashboardBackend() = default;
  // /api/top's body (TopPageJson).
  virtual nlohmann::json Top() = 0;
  // Stops the job as `stop` does; `stop --json`'s object (StopJson).
  virtual nlohmann::json Stop() = 0;
  // What the ranks printed, for /api/metrics and /api/logs.
  virtual const RunOutput& output() const = 0;
};

class DashboardServer {
 public:
  // Listens on 127.0.0.1:`port` (0: any free port) and serves from a
  // thread of its own until destroyed. Unavailable when the port cannot
  // be bound. `backend` must outlive the server.
  static absl::StatusOr<std::unique_ptr<DashboardServer>> Start(DashboardBackend* backend,
                                                                int port, std::string token);
  ~DashboardServer();

  int port() const { return port_; }
  // The page's address with the token: http://127.0.0.1:PORT/?token=...
  std::string url() const;

 private:
  DashboardServer() = default;
  void Route(DashboardBackend* backend);

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string token_;
  int port_ = 0;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_DASHBOARD_SERVER_H_
