#include "tools/spec/settings_parser.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace fleetplan {

NamedRegistry<TransportSettingsParser>& SettingsParsers() {
  // Leaked on purpose: plugins register during static initialisation.
  static auto* registry = new NamedRegistry<TransportSettingsParser>("settings parser");
  return *registry;
}

ScopedSettingsParser::ScopedSettingsParser(const std::string& name,
                                           std::unique_ptr<TransportSettingsParser> parser)
    : name_(name), previous_(SettingsParsers().Swap(name, std::move(parser))) {}

ScopedSettingsParser::~ScopedSettingsParser() {
  SettingsParsers().Swap(name_, std::move(previous_));
}

namespace settings_parser_internal {

Registerer::Registerer(const char* name, std::unique_ptr<TransportSettingsParser> parser) {
  absl::Status status = SettingsParsers().Register(name, std::move(parser));
  if (!status.ok()) {
    std::fprintf(stderr, "fleetplan: %s\n", std::string(status.message()).c_str());
    std::abort();
  }
}

}  // namespace settings_parser_internal
}  // namespace fleetplan
