#include "plugins/ssh/ssh_groups.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "tools/spec/settings_parser.h"
#include "tools/spec/validators.h"

namespace fleetplan {
namespace {

constexpr char kTable[] = "ssh";

constexpr absl::Duration kMaxPersist = absl::Hours(24);

// `persist = "10m"`: "0" for no holder, else 1s to 24h.
void ReadPersist(const toml::node& node, absl::string_view prefix, TomlReader& reader,
                 SshGroup* group) {
  std::string key = absl::StrCat(prefix, "persist");
  std::optional<std::string> text = reader.String(node, key);
  if (!text.has_value()) return;
  absl::Duration persist;
  if (*text == "0") {
    group->persist = absl::ZeroDuration();
  } else if (absl::ParseDuration(*text, &persist) && persist >= absl::Seconds(1) &&
             persist <= kMaxPersist) {
    group->persist = persist;
  } else {
    reader.Error(node, key,
                 absl::StrCat("\"", *text,
                              "\" is not \"0\" or a duration from 1s to 24h (expected e.g. "
                              "\"10m\", or \"0\" to keep no connection open)"));
  }
}

void ReadGroup(const toml::table& table, absl::string_view prefix, TomlReader& reader,
               SshGroup* group) {
  reader.CheckKeys(table, prefix, {"user", "port", "key_file", "known_hosts", "persist", "env"});
  if (const toml::node* user = table.get("user")) {
    if (std::optional<std::string> value = reader.String(*user, absl::StrCat(prefix, "user"))) {
      group->user = *value;
      if (!IsValidUserName(*value)) {
        reader.Error(*user, absl::StrCat(prefix, "user"),
                     absl::StrCat("\"", *value,
                                  "\" is not a valid user name (expected lowercase letters, "
                                  "digits, _ and -, not starting with a digit or -)"));
      }
    }
  }
  if (const toml::node* port = table.get("port")) {
    group->port = reader.Port(*port, absl::StrCat(prefix, "port")).value_or(0);
  }
  if (const toml::node* key_file = table.get("key_file")) {
    group->key_file = reader.String(*key_file, absl::StrCat(prefix, "key_file")).value_or("");
  }
  if (const toml::node* known_hosts = table.get("known_hosts")) {
    group->known_hosts =
        reader.String(*known_hosts, absl::StrCat(prefix, "known_hosts")).value_or("");
  }
  if (const toml::node* persist = table.get("persist")) ReadPersist(*persist, prefix, reader, group);
  if (const toml::node* env = table.get("env")) {
    group->env = reader.Env(*env, absl::StrCat(prefix, "env"));
  }
}

// Reads [ssh.<group>] tables; nodes pick one with `ssh = "<group>"`.
class SshGroupsParser : public TransportSettingsParser {
 public:
  bool HasGroups() const override { return true; }

  std::shared_ptr<const TransportSettings> Parse(const toml::node& ssh,
                                                 TomlReader& reader) const override {
    auto settings = std::make_shared<SshGroups>();
    const toml::table* groups = ssh.as_table();
    if (groups == nullptr) {
      reader.ExpectType(ssh, "ssh", "tables of named groups ([ssh.<name>])");
      return settings;
    }
    for (const auto& [name_key, node] : *groups) {
      std::string name(name_key.str());
      const toml::table* table = node.as_table();
      if (table == nullptr) {
        reader.ExpectType(node, absl::StrCat("ssh.", name),
                          "a table ([ssh.<name>] with user, port, ...)");
        continue;
      }
      SshGroup& group = settings->groups.emplace_back();
      group.name = name;
      ReadGroup(*table, absl::StrCat("ssh.", name, "."), reader, &group);
    }
    return settings;
  }
};

FLEETPLAN_REGISTER_SETTINGS_PARSER(kTable, SshGroupsParser);

}  // namespace

const SshGroup* SshGroups::Find(absl::string_view name) const {
  for (const SshGroup& group : groups) {
    if (group.name == name) return &group;
  }
  return nullptr;
}

std::vector<std::string> SshGroups::GroupNames() const {
  std::vector<std::string> names;
  for (const SshGroup& group : groups) names.push_back(group.name);
  return names;
}

EnvList SshGroups::GroupEnv(absl::string_view name) const {
  const SshGroup* group = Find(name);
  return group != nullptr ? group->env : EnvList{};
}

std::vector<std::pair<std::string, std::string>> SshGroups::Describe() const {
  std::vector<std::pair<std::string, std::string>> fields;
  fields.emplace_back("ssh.groups", absl::StrCat(groups.size()));
  for (const SshGroup& group : groups) {
    fields.emplace_back("ssh.name", group.name);
    fields.emplace_back("ssh.user", group.user);
    fields.emplace_back("ssh.port", absl::StrCat(group.port));
    fields.emplace_back("ssh.key_file", group.key_file);
    fields.emplace_back("ssh.known_hosts", group.known_hosts);
    fields.emplace_back("ssh.env", absl::StrCat(group.env.size()));
    for (const auto& [name, value] : group.env) fields.emplace_back(name, value);
  }
  return fields;
}

const SshGroup* FindSshGroup(const ClusterSpec& spec, const NodeSpec& node) {
  const auto* settings = dynamic_cast<const SshGroups*>(spec.Settings(kTable));
  return settings != nullptr ? settings->Find(node.GroupIn(kTable)) : nullptr;
}

SshGroups& EditSshGroups(ClusterSpec& spec) {
  const auto* current = dynamic_cast<const SshGroups*>(spec.Settings(kTable));
  auto copy =
      current != nullptr ? std::make_shared<SshGroups>(*current) : std::make_shared<SshGroups>();
  spec.transport_settings[kTable] = copy;
  return *copy;
}

}  // namespace fleetplan
