#include "plugins/transport.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/util/did_you_mean.h"

namespace fleetplan {

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
