#ifndef FLEETPLAN_TOOLS_SPEC_SETTINGS_PARSER_H_
#define FLEETPLAN_TOOLS_SPEC_SETTINGS_PARSER_H_

// How a transport reads its own table of the spec ([ssh.<group>],
// [docker]): the extension point through which the spec reader hands a
// transport its located TOML and the file's error collector, and gets back
// opaque TransportSettings (cluster_spec.h) that it stores in the
// ClusterSpec under the table's name.
//
// Layering: the interface and its registry live here, in tools/spec, below
// plugins/. A plugin (plugins/<name>/) implements TransportSettingsParser
// and registers it under its transport's name with
// FLEETPLAN_REGISTER_SETTINGS_PARSER; the spec reader finds parsers by
// table name through the registry, so tools/spec never depends on plugins/
// and a binary reads the tables of exactly the transports it links. A
// top-level table no parser is registered for is an unknown key, with a
// suggestion among the registered names.

#include <memory>
#include <string>

#include "tools/spec/tomlplusplus.h"
#include "tools/spec/cluster_spec.h"
#include "tools/spec/toml_reader.h"
#include "tools/util/named_registry.h"

namespace fleetplan {

class TransportSettingsParser {
 public:
  virtual ~TransportSettingsParser() = default;

  // True when the table holds named groups ([<name>.<group>]) and nodes
  // pick one with the node key `<name> = "<group>"`, in [defaults] or on
  // the node. The spec reader then accepts that key, reads this table
  // before the nodes, and reports a picked group the table does not define.
  // Default: false (one table, read after [job]).
  virtual bool HasGroups() const { return false; }

  // Reads `table`, the value of the top-level key `<name>`, with its source
  // positions, recording every problem through `reader` (keys are written
  // as the user wrote them: "<name>.<key>"). Returns the settings, possibly
  // partial after errors, which refuse the spec anyway.
  virtual std::shared_ptr<const TransportSettings> Parse(const toml::node& table,
                                                         TomlReader& reader) const = 0;

  // Called once every node has been read, when at least one node's
  // transport is `<name>`: records what those nodes need and the settings
  // lack. `table` and `settings` are null when the spec has no such table.
  // Default: nothing is required.
  virtual void CheckUse(const toml::table* table, const TransportSettings* settings,
                        TomlReader& reader) const {}
};

// Table name -> parser; the transport's name. Filled at static
// initialisation.
NamedRegistry<TransportSettingsParser>& SettingsParsers();

// Puts `parser` under `name` until destroyed, then restores what was there.
// For tests.
class ScopedSettingsParser {
 public:
  ScopedSettingsParser(const std::string& name, std::unique_ptr<TransportSettingsParser> parser);
  ~ScopedSettingsParser();
  ScopedSettingsParser(const ScopedSettingsParser&) = delete;
  ScopedSettingsParser& operator=(const ScopedSettingsParser&) = delete;

 private:
  std::string name_;
  std::unique_ptr<TransportSettingsParser> previous_;
};

namespace settings_parser_internal {
// Registers at static initialisation; aborts on a duplicate name, which is
// a build mistake.
struct Registerer {
  Registerer(const char* name, std::unique_ptr<TransportSettingsParser> parser);
};
}  // namespace settings_parser_internal

}  // namespace fleetplan

// Registers `Type` (default-constructible) as the parser of table `name`.
// Put it in the plugin's .cc file; the plugin's cc_library needs
// alwayslink = True.
#define FLEETPLAN_REGISTER_SETTINGS_PARSER(name, Type)     \
  static ::fleetplan::settings_parser_internal::Registerer \
      fleetplan_settings_parser_registerer_##Type(name, std::make_unique<Type>())

#endif  // FLEETPLAN_TOOLS_SPEC_SETTINGS_PARSER_H_
