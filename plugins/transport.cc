#include "plugins/transport.h"

#include <algorithm>
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
  for (const auto& entry : transports_) {
    if (entry.first == name) {
      return absl::AlreadyExistsError(
          absl::StrCat("transport \"", name, "\" is registered twice"));
    }
  }
  transports_.emplace_back(name, std::move(transport));
  return absl::OkStatus();
}

absl::StatusOr<Transport*> TransportRegistry::Find(absl::string_view name) const {
  for (const auto& entry : transports_) {
    if (entry.first == name) return entry.second.get();
  }
  std::vector<std::string> names = Names();
  return absl::NotFoundError(absl::StrCat(
      "unknown transport \"", name, "\" (registered: ",
      names.empty() ? "none" : absl::StrJoin(names, ", "), ")",
      DidYouMean(name, names)));
}

std::vector<std::string> TransportRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& entry : transports_) names.push_back(entry.first);
  std::sort(names.begin(), names.end());
  return names;
}

TransportRegistry::ScopedOverride::ScopedOverride(
    const std::string& name, std::unique_ptr<Transport> transport)
    : name_(name) {
  auto& transports = Global().transports_;
  for (auto& entry : transports) {
    if (entry.first == name) {
      previous_ = std::move(entry.second);
      entry.second = std::move(transport);
      return;
    }
  }
  transports.emplace_back(name, std::move(transport));
}

TransportRegistry::ScopedOverride::~ScopedOverride() {
  auto& transports = Global().transports_;
  for (auto it = transports.begin(); it != transports.end(); ++it) {
    if (it->first != name_) continue;
    if (previous_) {
      it->second = std::move(previous_);
    } else {
      transports.erase(it);
    }
    return;
  }
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
