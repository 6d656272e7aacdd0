#include "plugins/transport.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/util/did_you_mean.h"

namespace fleetplan {

absl::StatusOr<uint64_t> Connection::PutFilesCounting(const std::vector<FileToSend>& files,
                                                      const std::string& remote_root) {
  absl::Status sent = PutFiles(files, remote_root);
  if (!sent.ok()) return sent;
  uint64_t bytes = 0;
  for (const FileToSend& file : files) bytes += file.size;
  return bytes;
}

TransportRegistry& TransportRegistry::Global() {
  // Leaked on purpose: plugins register during static initialisation.
  static TransportRegistry* registry = new TransportRegistry;
  return *registry;
}

absl::Status TransportRegistry::Register(const std::string& name,
                                         std::unique_ptr<Transport> transport) {
  return transports_.Register(name, std::move(transport));
}

absl::StatusOr<Transport*> TransportRegistry::Find(absl::string_view name) const {
  if (Transport* transport = transports_.Get(name)) return transport;
  std::vector<std::string> names = Names();
  return absl::NotFoundError(absl::StrCat(
      "unknown transport \"", name, "\" (registered: ",
      names.empty() ? "none" : absl::StrJoin(names, ", "), ")",
      DidYouMean(name, names)));
}

std::vector<std::string> TransportRegistry::Names() const { return transports_.Names(); }

TransportRegistry::ScopedOverride::ScopedOverride(
    const std::string& name, std::unique_ptr<Transport> transport)
    : name_(name), previous_(Global().transports_.Swap(name, std::move(transport))) {}

TransportRegistry::ScopedOverride::~ScopedOverride() {
  Global().transports_.Swap(name_, std::move(previous_));
}

namespace {

// The registered transports `spec`'s nodes use, each once, in node order.
absl::StatusOr<std::vector<std::pair<std::string, Transport*>>> TransportsOf(
    const ClusterSpec& spec) {
  std::vector<std::pair<std::string, Transport*>> used;
  for (const NodeSpec& node : spec.nodes) {
    bool seen = false;
    for (const auto& entry : used) seen = seen || entry.first == node.transport;
    if (seen) continue;
    absl::StatusOr<Transport*> transport = TransportRegistry::Global().Find(node.transport);
    if (!transport.ok()) return transport.status();
    used.emplace_back(node.transport, *transport);
  }
  return used;
}

absl::Status Named(const std::string& transport, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(transport, ": ", status.message()));
}

}  // namespace

absl::Status ResolveSpecNodes(ClusterSpec& spec, const TransportOptions& options) {
  absl::StatusOr<std::vector<std::pair<std::string, Transport*>>> used = TransportsOf(spec);
  if (!used.ok()) return used.status();
  for (const auto& [name, transport] : *used) {
    if (absl::Status status = transport->ResolveNodes(spec, options); !status.ok()) {
      return Named(name, status);
    }
  }
  return absl::OkStatus();
}

absl::Status ReleaseSpec(const ClusterSpec& spec) {
  absl::StatusOr<std::vector<std::pair<std::string, Transport*>>> used = TransportsOf(spec);
  if (!used.ok()) return used.status();
  absl::Status first;
  for (const auto& [name, transport] : *used) first.Update(Named(name, transport->Release(spec)));
  return first;
}

namespace transport_internal {

Registerer::Registerer(const char* name, std::unique_ptr<Transport> transport) {
  absl::Status status = TransportRegistry::Global().Register(name, std::move(transport));
  if (!status.ok()) {
    std::fprintf(stderr, "fleetplan: %s\n", std::string(status.message()).c_str());
    std::abort();
  }
}

}  // namespace transport_internal
}  // namespace fleetplan
