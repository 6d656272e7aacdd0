#include "plugins/docker/docker_transport.h"

#include <sys/stat.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "plugins/docker/docker_settings.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

// Keeps the container running for execs and exits promptly on SIGTERM
// (pid 1 ignores signals it has no handler for).
constexpr char kKeepAlive[] =
    "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done";

constexpr const char* kHostMounts[] = {"/usr", "/lib", "/lib64", "/bin",
                                       "/sbin"};

bool IsContainerName(const std::string& name) {
  // Docker's rule: [a-zA-Z0-9][a-zA-Z0-9_.-]+ (one character is fine too).
  if (name.empty() || !absl::ascii_isalnum(name[0])) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != '.' && c != '-') {
      return false;
    }
  }
  return true;
}

std::string Where(const NodeSpec& node) {
  if (node.location.file.empty()) return "";
  return absl::StrCat(node.location.file, ":", node.location.line, ": ");
}

}  // namespace

nlohmann::json NodeContainerConfig(const ClusterSpec& spec,
                                   const NodeSpec& node) {
  nlohmann::json mounts = nlohmann::json::array();
  for (const char* dir : kHostMounts) {
    struct stat st;
    if (stat(dir, &st) != 0) continue;  // /lib64 is missing on some hosts
    mounts.push_back(
        {{"Type", "bind"}, {"Source", dir}, {"Target", dir}, {"ReadOnly", true}});
  }
  nlohmann::json host_config = {{"Mounts", mounts}};
  if (!DockerSettingsOf(spec).network.empty()) {
    host_config["NetworkMode"] = DockerSettingsOf(spec).network;
  }
  return {{"Image", DockerSettingsOf(spec).image},
          {"Hostname", node.address},
          {"Entrypoint", {"/bin/sh", "-c", kKeepAlive}},
          {"Cmd", nlohmann::json::array()},
          {"Labels", {{kCreatedByLabel, spec.name}}},
          {"HostConfig", host_config}};
}

absl::Status DockerTransport::ValidateNode(const ClusterSpec& spec,
                                           const NodeSpec& node) const {
  if (!IsContainerName(node.address)) {
    return absl::InvalidArgumentError(absl::StrCat(
        Where(node), "node ", node.name, ": address '", node.address,
        "' is not a container name ([a-zA-Z0-9][a-zA-Z0-9_.-]*)"));
  }
  if (DockerSettingsOf(spec).create && DockerSettingsOf(spec).image.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        Where(node), "node ", node.name,
        ": [docker] create = true needs [docker] image"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const DockerClient>> DockerTransport::Client() {
  FP_ASSIGN_OR_RETURN(std::string socket, DockerClient::SocketFromEnvironment());
  return std::make_shared<const DockerClient>(std::move(socket));
}

absl::Status DockerTransport::EnsureNetwork(const DockerClient& client,
                                            const ClusterSpec& spec) {
  const std::string& network = DockerSettingsOf(spec).network;
  if (network.empty()) return absl::OkStatus();
  absl::MutexLock lock(&network_mu_);
  absl::StatusOr<nlohmann::json> inspect = client.InspectNetwork(network);
  if (inspect.ok() || !absl::IsNotFound(inspect.status())) {
    return inspect.status();
  }
  return client.CreateNetwork(network, {{kCreatedByLabel, spec.name}});
}

absl::StatusOr<std::unique_ptr<Connection>> DockerTransport::Connect(
    const ClusterSpec& spec, const NodeSpec& node, const TransportOptions& options) {
  FP_ASSIGN_OR_RETURN(std::shared_ptr<const DockerClient> client, Client());
  const std::string& name = node.address;
  absl::StatusOr<nlohmann::json> inspect = client->InspectContainer(name);
  if (absl::IsNotFound(inspect.status())) {
    if (!DockerSettingsOf(spec).create) {
      return absl::UnavailableError(absl::StrCat(
          "node ", node.name, ": no container named ", name,
          " (start it, or set [docker] create = true)"));
    }
    if (options.read_only) {
      return absl::NotFoundError(absl::StrCat("node ", node.name, ": no container named ",
                                              name, " yet (apply creates it)"));
    }
    FP_RETURN_IF_ERROR(EnsureNetwork(*client, spec));
    absl::Status created =
        client->CreateContainer(name, NodeContainerConfig(spec, node));
    // 409: a concurrent apply created it first; use that one.
    if (!created.ok() && !absl::IsFailedPrecondition(created)) return created;
    FP_RETURN_IF_ERROR(client->StartContainer(name));
  } else {
    FP_RETURN_IF_ERROR(inspect.status());
    if (!(*inspect)["State"].value("Running", false)) {
      if (options.read_only) {
        return absl::UnavailableError(absl::StrCat(
            "node ", node.name, ": container ", name,
            " is stopped (checks start none; apply does)"));
      }
      FP_RETURN_IF_ERROR(client->StartContainer(name));
    }
  }
  return std::make_unique<DockerConnection>(client, name, options_);
}

absl::Status DockerTransport::Destroy(const ClusterSpec& spec,
                                      const NodeSpec& node) {
  FP_ASSIGN_OR_RETURN(std::shared_ptr<const DockerClient> client, Client());
  absl::StatusOr<nlohmann::json> inspect =
      client->InspectContainer(node.address);
  if (inspect.ok()) {
    const nlohmann::json& labels = (*inspect)["Config"]["Labels"];
    // Containers the user made are theirs to remove.
    if (labels.is_object() && labels.contains(kCreatedByLabel)) {
      FP_RETURN_IF_ERROR(client->RemoveContainer(node.address));
    }
  } else if (!absl::IsNotFound(inspect.status())) {
    return inspect.status();
  }
  if (DockerSettingsOf(spec).network.empty()) return absl::OkStatus();
  absl::StatusOr<nlohmann::json> network =
      client->InspectNetwork(DockerSettingsOf(spec).network);
  if (absl::IsNotFound(network.status())) return absl::OkStatus();
  FP_RETURN_IF_ERROR(network.status());
  const nlohmann::json& labels = (*network)["Labels"];
  const nlohmann::json& users = (*network)["Containers"];
  bool ours = labels.is_object() && labels.contains(kCreatedByLabel);
  bool unused = !users.is_object() || users.empty();
  if (!ours || !unused) return absl::OkStatus();
  absl::Status removed = client->RemoveNetwork(DockerSettingsOf(spec).network);
  // Another node's container joined meanwhile: its Destroy removes it.
  if (absl::IsFailedPrecondition(removed)) return absl::OkStatus();
  return removed;
}

FLEETPLAN_REGISTER_TRANSPORT("docker", DockerTransport);

}  // namespace fleetplan
