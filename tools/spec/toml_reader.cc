#include "tools/spec/toml_reader.h"

#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tools/spec/validators.h"
#include "tools/util/did_you_mean.h"

namespace fleetplan {
namespace {

std::string TypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    default:
      return "a date or time";
  }
}

// The 1-based character (not byte) at `offset` of UTF-8 `text`.
size_t CharacterAt(absl::string_view text, size_t offset) {
  size_t characters = 1;
  for (size_t i = 0; i < offset; ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) ++characters;
  }
  return characters;
}

// Why `text` is refused, or "" when every control character in it is allowed.
std::string RefusedControl(absl::string_view text, Controls allowed) {
  size_t at = FindControlCharacter(text, allowed == Controls::kTabNewline);
  if (at == absl::string_view::npos) return "";
  size_t character = CharacterAt(text, at);
  if (text[at] == '\0') {
    return absl::StrCat("contains a NUL byte (\\u0000) at character ", character,
                        ": no path, argument or environment value can hold one");
  }
  return absl::StrCat(
      "contains the control character ",
      absl::StrFormat("\\u%04x", static_cast<unsigned char>(text[at])), " at character ",
      character,
      allowed == Controls::kTabNewline
          ? " (arguments and environment values may hold tabs and newlines, no other "
            "control characters)"
          : " (names and paths must be printable text)");
}

}  // namespace

Position PositionOf(const toml::source_region& region) {
  return Position{static_cast<int>(region.begin.line), static_cast<int>(region.begin.column)};
}

void TomlReader::Error(const toml::node& node, absl::string_view key, absl::string_view message) {
  Error(PositionOf(node.source()), key, message);
}

void TomlReader::Error(Position at, absl::string_view key, absl::string_view message) {
  errors_.Add(at.line, at.column, key, message);
}

void TomlReader::ExpectType(const toml::node& node, absl::string_view key,
                            absl::string_view expected) {
  Error(node, key, absl::StrCat("expected ", expected, ", got ", TypeName(node)));
}

void TomlReader::CheckKeys(const toml::table& table, absl::string_view prefix,
                           const std::vector<std::string>& allowed) {
  for (const auto& [key, node] : table) {
    std::string name(key.str());
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
    Position at = PositionOf(key.source());
    if (at.line == 0) at = PositionOf(node.source());
    Error(at, absl::StrCat(prefix, name),
          absl::StrCat("unknown key (expected one of: ", absl::StrJoin(allowed, ", "), ")",
                       DidYouMean(name, allowed)));
  }
}

std::optional<std::string> TomlReader::String(const toml::node& node, absl::string_view key,
                                              Controls allowed) {
  const auto* value = node.as_string();
  if (value == nullptr) {
    ExpectType(node, key, "a string");
    return std::nullopt;
  }
  if (std::string refused = RefusedControl(value->get(), allowed); !refused.empty()) {
    Error(node, key, refused);
    return std::nullopt;
  }
  return value->get();
}

std::optional<bool> TomlReader::Bool(const toml::node& node, absl::string_view key) {
  if (const auto* value = node.as_boolean()) return value->get();
  ExpectType(node, key, "true or false");
  return std::nullopt;
}

std::optional<int64_t> TomlReader::Integer(const toml::node& node, absl::string_view key) {
  if (const auto* value = node.as_integer()) return value->get();
  ExpectType(node, key, "an integer");
  return std::nullopt;
}

std::optional<int> TomlReader::Port(const toml::node& node, absl::string_view key) {
  std::optional<int64_t> port = Integer(node, key);
  if (!port) return std::nullopt;
  if (*port < 1 || *port > 65535) {
    Error(node, key, absl::StrCat("port ", *port, " is out of range (expected 1 to 65535)"));
    return std::nullopt;
  }
  return static_cast<int>(*port);
}

std::optional<std::vector<int>> TomlReader::IdList(const toml::node& node, absl::string_view key) {
  const toml::array* array = node.as_array();
  if (array == nullptr) {
    ExpectType(node, key, "an array of integers");
    return std::nullopt;
  }
  std::vector<int> ids;
  bool ok = true;
  for (const toml::node& element : *array) {
    const auto* value = element.as_integer();
    if (value == nullptr) {
      ExpectType(element, key, "an integer id");
      ok = false;
      continue;
    }
    if (value->get() < 0 || value->get() > INT_MAX) {
      Error(element, key, absl::StrCat("id ", value->get(), " is negative or too large"));
      ok = false;
      continue;
    }
    int id = static_cast<int>(value->get());
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) {
      Error(element, key, absl::StrCat("id ", id, " is listed twice"));
      ok = false;
      continue;
    }
    ids.push_back(id);
  }
  if (!ok) return std::nullopt;
  return ids;
}

std::optional<std::vector<std::string>> TomlReader::StringList(const toml::node& node,
                                                               absl::string_view key,
                                                               Controls allowed) {
  const toml::array* array = node.as_array();
  if (array == nullptr) {
    ExpectType(node, key, "an array of strings");
    return std::nullopt;
  }
  std::vector<std::string> values;
  for (const toml::node& element : *array) {
    if (std::optional<std::string> value = String(element, key, allowed)) {
      values.push_back(*value);
    }
  }
  return values;
}

EnvList TomlReader::Env(const toml::node& node, absl::string_view key) {
  EnvList env;
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    ExpectType(node, key, "a table of NAME = \"value\"");
    return env;
  }
  for (const auto& [name_key, value] : *table) {
    std::string name(name_key.str());
    std::string full_key = absl::StrCat(key, ".", name);
    if (!IsValidEnvName(name)) {
      Position at = PositionOf(name_key.source());
      if (at.line == 0) at = PositionOf(value.source());
      Error(at, full_key,
            "not a valid environment variable name (expected letters, digits and "
            "_, not starting with a digit)");
      continue;
    }
    if (std::optional<std::string> text = String(value, full_key, Controls::kTabNewline)) {
      env.emplace_back(name, *text);
    }
  }
  return env;
}

}  // namespace fleetplan
