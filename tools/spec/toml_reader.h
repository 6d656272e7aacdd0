#ifndef FLEETPLAN_TOOLS_SPEC_TOML_READER_H_
#define FLEETPLAN_TOOLS_SPEC_TOML_READER_H_

// Typed reads of TOML values that report a wrong type, an unknown key or a
// bad value to SpecErrors at the value's file:line:col, in the wording every
// table of the spec shares ("expected an integer, got a string"). The spec
// reader and the transports' settings parsers (settings_parser.h) read
// through it, so a transport's table reads like the rest of the file.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tools/spec/tomlplusplus.h"
#include "tools/spec/cluster_spec.h"
#include "tools/spec/spec_errors.h"

namespace fleetplan {

// A place in the spec file, 1-based; 0 means unknown.
struct Position {
  int line = 0;
  int column = 0;
};

// Where `region` (a value's or a key's source) begins.
Position PositionOf(const toml::source_region& region);

// Which control characters (U+0000 to U+001F, and DEL) a string value may
// hold. NUL never: no path, argument or environment value can carry one, and
// other control characters in a name or path only garble what plan prints.
enum class Controls {
  kNone,        // names, paths and labels: printable text only
  kTabNewline,  // arguments and environment values: tabs and newlines too
};

class TomlReader {
 public:
  // `errors` must outlive this object.
  explicit TomlReader(SpecErrors& errors) : errors_(errors) {}

  // Records an error at `node`'s position or at `at`. `key` is the dotted
  // key as the user wrote it ("ssh.lambda.port").
  void Error(const toml::node& node, absl::string_view key, absl::string_view message);
  void Error(Position at, absl::string_view key, absl::string_view message);

  // Records "expected <expected>, got <node's type>".
  void ExpectType(const toml::node& node, absl::string_view key, absl::string_view expected);

  // Records every key of `table` not in `allowed`, listing them and
  // suggesting the nearest. `prefix` is prepended to the key ("docker.").
  void CheckKeys(const toml::table& table, absl::string_view prefix,
                 const std::vector<std::string>& allowed);

  // Each returns the value, or nullopt after recording why it is not one.
  // A string holding a control character `allowed` does not admit is refused
  // ("contains the control character \u001b at character 4 ...").
  std::optional<std::string> String(const toml::node& node, absl::string_view key,
                                    Controls allowed = Controls::kNone);
  std::optional<bool> Bool(const toml::node& node, absl::string_view key);
  std::optional<int64_t> Integer(const toml::node& node, absl::string_view key);
  // An integer from 1 to 65535.
  std::optional<int> Port(const toml::node& node, absl::string_view key);
  // An array of distinct non-negative integers (GPU or CPU ids).
  std::optional<std::vector<int>> IdList(const toml::node& node, absl::string_view key);
  std::optional<std::vector<std::string>> StringList(const toml::node& node, absl::string_view key,
                                                     Controls allowed = Controls::kNone);

  // A table of NAME = "value": valid names only, in the table's (sorted)
  // order; bad entries are recorded and left out. Values may hold tabs and
  // newlines (Controls::kTabNewline).
  EnvList Env(const toml::node& node, absl::string_view key);

 private:
  SpecErrors& errors_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SPEC_TOML_READER_H_
