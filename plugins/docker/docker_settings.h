#ifndef FLEETPLAN_PLUGINS_DOCKER_DOCKER_SETTINGS_H_
#define FLEETPLAN_PLUGINS_DOCKER_DOCKER_SETTINGS_H_

// The docker transport's settings: the spec's [docker] table. The parser
// registered here reads and checks it; the spec stores it, opaque, under
// "docker".

#include <string>
#include <utility>
#include <vector>

#include "tools/spec/cluster_spec.h"

namespace fleetplan {

class DockerSettings : public TransportSettings {
 public:
  std::string image;    // what apply creates a node's container from
  std::string network;  // empty: Docker's default bridge
  bool create = false;  // create a node's container when it is missing

  std::vector<std::pair<std::string, std::string>> Describe() const override;
};

// The spec's [docker] settings; defaults (no image) when it has none.
const DockerSettings& DockerSettingsOf(const ClusterSpec& spec);

// The spec's [docker] settings as a copy the spec now holds, for code that
// builds specs by hand (tests, benches).
DockerSettings& EditDockerSettings(ClusterSpec& spec);

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_DOCKER_DOCKER_SETTINGS_H_
