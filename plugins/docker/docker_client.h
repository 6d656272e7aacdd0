#ifndef FLEETPLAN_PLUGINS_DOCKER_DOCKER_CLIENT_H_
#define FLEETPLAN_PLUGINS_DOCKER_DOCKER_CLIENT_H_

// A small client of the Docker Engine API over its unix socket (libcurl
// with CURLOPT_UNIX_SOCKET_PATH): the calls the docker transport needs and
// nothing else. Every call opens its own connection, so one client may be
// shared by threads.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace fleetplan {

// The API version every path is prefixed with; Docker 20.10 and later
// serve it.
inline constexpr absl::string_view kDockerApiVersion = "v1.41";

struct HttpResponse {
  long status = 0;
  std::string body;
};

class DockerClient {
 public:
  // `socket_path` is the daemon's unix socket.
  explicit DockerClient(std::string socket_path)
      : socket_path_(std::move(socket_path)) {}

  // The socket $DOCKER_HOST names (unix://PATH), default
  // /var/run/docker.sock. InvalidArgument for another scheme.
  static absl::StatusOr<std::string> SocketFromEnvironment();

  const std::string& socket_path() const { return socket_path_; }

  // One request; `path` without the version prefix ("/containers/x/json").
  // FailedPrecondition (one line, how to start a daemon) when nothing
  // answers on the socket, Unavailable for other transfer errors. HTTP
  // error statuses are returned, not turned into errors.
  absl::StatusOr<HttpResponse> Request(absl::string_view method,
                                       absl::string_view path,
                                       absl::string_view body = "",
                                       absl::string_view content_type =
                                           "application/json") const;

  // GET /_ping.
  absl::Status Ping() const;

  // Container inspect; NotFound naming `name` when it does not exist.
  absl::StatusOr<nlohmann::json> InspectContainer(absl::string_view name) const;
  // Creates container `name` from `config` (the API's create body);
  // NotFound naming the image when it is missing.
  absl::Status CreateContainer(absl::string_view name,
                               const nlohmann::json& config) const;
  // Starts it; already running is fine.
  absl::Status StartContainer(absl::string_view name) const;
  // Removes it, running or not (force); missing is fine.
  absl::Status RemoveContainer(absl::string_view name) const;

  // Network inspect; NotFound naming `name` when it does not exist.
  absl::StatusOr<nlohmann::json> InspectNetwork(absl::string_view name) const;
  // Creates a bridge network `name` carrying `labels`; one that appeared
  // meanwhile is fine.
  absl::Status CreateNetwork(absl::string_view name,
                             const nlohmann::json& labels) const;
  // Removes it; missing is fine, FailedPrecondition while in use.
  absl::Status RemoveNetwork(absl::string_view name) const;

  // Creates an exec in `container` from `config`; returns its id.
  // Unavailable naming the container when it is gone or not running.
  absl::StatusOr<std::string> CreateExec(absl::string_view container,
                                         const nlohmann::json& config) const;
  // Exec inspect.
  absl::StatusOr<nlohmann::json> InspectExec(absl::string_view id) const;

  // Extracts the tar stream `tar` into directory `path` of `container`.
  // NotFound when `path` does not exist.
  absl::Status PutArchive(absl::string_view container, absl::string_view path,
                          absl::string_view tar) const;
  // A tar stream of `path` in `container`; NotFound when it does not exist.
  absl::StatusOr<std::string> GetArchive(absl::string_view container,
                                         absl::string_view path) const;

  // The one-line error for a daemon that does not answer.
  absl::Status DaemonNotRunning(absl::string_view detail) const;

 private:
  // Turns an HTTP error status into a Status carrying the daemon's message.
  absl::Status HttpError(const HttpResponse& response,
                         absl::string_view what) const;

  std::string socket_path_;
};

// "/a b" → "%2Fa%20b", for query values.
std::string UrlEncode(absl::string_view value);

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_DOCKER_DOCKER_CLIENT_H_
