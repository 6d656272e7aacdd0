#ifndef FLEETPLAN_PLUGINS_DOCKER_DOCKER_TRANSPORT_H_
#define FLEETPLAN_PLUGINS_DOCKER_DOCKER_TRANSPORT_H_

// The `docker` transport: every node is a container on this machine's
// Docker daemon ($DOCKER_HOST, unix:// only; default /var/run/docker.sock),
// named by the node's address. Connect starts a stopped container and, with
// [docker] create = true, creates a missing one from [docker] image on
// [docker] network (neither with TransportOptions::read_only); Destroy
// removes what Connect created. Registered as "docker".

#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"
#include "plugins/docker/docker_client.h"
#include "plugins/docker/docker_connection.h"
#include "plugins/transport.h"

namespace fleetplan {

// Label on the containers and networks the transport creates; Destroy
// removes only what carries it. Its value is the spec's name.
inline constexpr char kCreatedByLabel[] = "fleetplan.docker";

// The create body for a node container: `image` kept alive by a shell loop
// whatever its own command is (so execs have a running container), the
// host's /usr, /lib, /lib64, /bin and /sbin mounted read-only (the
// project's binaries and their libraries run inside), on `network`.
nlohmann::json NodeContainerConfig(const ClusterSpec& spec,
                                   const NodeSpec& node);

class DockerTransport : public Transport {
 public:
  DockerTransport() = default;
  explicit DockerTransport(DockerOptions options) : options_(options) {}

  bool RelaysSync() const override { return true; }

  // The address must be a container name; create = true needs an image.
  absl::Status ValidateNode(const ClusterSpec& spec,
                            const NodeSpec& node) const override;
  // FailedPrecondition (one line) when no daemon answers; Unavailable
  // naming the node when its container is missing and create is false;
  // NotFound naming the image when create needs a missing one.
  absl::StatusOr<std::unique_ptr<Connection>> Connect(
      const ClusterSpec& spec, const NodeSpec& node,
      const TransportOptions& options) override;
  // Removes the node's container if the transport created it, then the
  // network if it created that and nothing else uses it.
  absl::Status Destroy(const ClusterSpec& spec, const NodeSpec& node) override;

 private:
  absl::StatusOr<std::shared_ptr<const DockerClient>> Client();
  absl::Status EnsureNetwork(const DockerClient& client,
                             const ClusterSpec& spec);

  DockerOptions options_;
  // Nodes connect in parallel; without this, each could find the network
  // missing and create one, and the daemon allows several of one name.
  absl::Mutex network_mu_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_DOCKER_DOCKER_TRANSPORT_H_
