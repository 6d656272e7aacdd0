#include "plugins/docker/docker_settings.h"

#include <memory>

#include "tools/spec/settings_parser.h"

namespace fleetplan {
namespace {

constexpr char kTable[] = "docker";

// Reads [docker]; nodes with transport "docker" need its image.
class DockerSettingsParser : public TransportSettingsParser {
 public:
  std::shared_ptr<const TransportSettings> Parse(const toml::node& docker,
                                                 TomlReader& reader) const override {
    auto settings = std::make_shared<DockerSettings>();
    const toml::table* table = docker.as_table();
    if (table == nullptr) {
      reader.ExpectType(docker, "docker", "a table");
      return settings;
    }
    reader.CheckKeys(*table, "docker.", {"image", "network", "create"});
    if (const toml::node* node = table->get("image")) {
      settings->image = reader.String(*node, "docker.image").value_or("");
    }
    if (const toml::node* node = table->get("network")) {
      settings->network = reader.String(*node, "docker.network").value_or("");
    }
    if (const toml::node* node = table->get("create")) {
      settings->create = reader.Bool(*node, "docker.create").value_or(false);
    }
    return settings;
  }

  void CheckUse(const toml::table* table, const TransportSettings* settings,
                TomlReader& reader) const override {
    const auto* docker = dynamic_cast<const DockerSettings*>(settings);
    if (docker != nullptr && !docker->image.empty()) return;
    reader.Error(table != nullptr ? PositionOf(table->source()) : Position{1, 1},
                 "docker.image", "missing: nodes with transport \"docker\" need [docker] image");
  }
};

FLEETPLAN_REGISTER_SETTINGS_PARSER(kTable, DockerSettingsParser);

}  // namespace

std::vector<std::pair<std::string, std::string>> DockerSettings::Describe() const {
  return {{"docker.image", image},
          {"docker.network", network},
          {"docker.create", create ? "1" : "0"}};
}

const DockerSettings& DockerSettingsOf(const ClusterSpec& spec) {
  static const DockerSettings* defaults = new DockerSettings;
  const auto* settings = dynamic_cast<const DockerSettings*>(spec.Settings(kTable));
  return settings != nullptr ? *settings : *defaults;
}

DockerSettings& EditDockerSettings(ClusterSpec& spec) {
  auto copy = std::make_shared<DockerSettings>(DockerSettingsOf(spec));
  spec.transport_settings[kTable] = copy;
  return *copy;
}

}  // namespace fleetplan
