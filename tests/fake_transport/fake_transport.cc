#include "tests/fake_transport/fake_transport.h"

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "plugins/local/local_transport.h"
#include "plugins/transport.h"
#include "tools/spec/settings_parser.h"

namespace fleetplan {
namespace {

constexpr char kName[] = "fake";

absl::Mutex labels_mu;
std::vector<std::string>* connected_labels ABSL_GUARDED_BY(labels_mu) =
    new std::vector<std::string>;

class FakeSettingsParser : public TransportSettingsParser {
 public:
  bool HasGroups() const override { return true; }

  std::shared_ptr<const TransportSettings> Parse(const toml::node& fake,
                                                 TomlReader& reader) const override {
    auto settings = std::make_shared<FakeSettings>();
    const toml::table* groups = fake.as_table();
    if (groups == nullptr) {
      reader.ExpectType(fake, kName, "tables of named groups ([fake.<name>])");
      return settings;
    }
    for (const auto& [name_key, node] : *groups) {
      std::string name(name_key.str());
      std::string prefix = absl::StrCat(kName, ".", name, ".");
      const toml::table* table = node.as_table();
      if (table == nullptr) {
        reader.ExpectType(node, absl::StrCat(kName, ".", name), "a table");
        continue;
      }
      reader.CheckKeys(*table, prefix, {"label", "env"});
      FakeGroup& group = settings->groups.emplace_back();
      group.name = name;
      if (const toml::node* label = table->get("label")) {
        group.label = reader.String(*label, prefix + "label").value_or("");
      } else {
        reader.Error(node, prefix + "label", "missing: every [fake.<group>] needs a label");
      }
      if (const toml::node* env = table->get("env")) group.env = reader.Env(*env, prefix + "env");
    }
    return settings;
  }
};

// The local transport's behaviour, plus a check of the node's group.
class FakeTransport : public Transport {
 public:
  absl::Status ValidateNode(const ClusterSpec& spec, const NodeSpec& node) const override {
    if (FindGroup(spec, node) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("node \"", node.name, "\": no [fake.<group>] picked"));
    }
    return local_.ValidateNode(spec, node);
  }

  absl::StatusOr<std::unique_ptr<Connection>> Connect(const ClusterSpec& spec,
                                                      const NodeSpec& node,
                                                      const TransportOptions& options) override {
    const FakeGroup* group = FindGroup(spec, node);
    if (group == nullptr) return absl::InvalidArgumentError("no [fake.<group>] picked");
    {
      absl::MutexLock lock(&labels_mu);
      connected_labels->push_back(group->label);
    }
    return local_.Connect(spec, node, options);
  }

  bool SharesLocalFilesystem() const override { return true; }

 private:
  static const FakeGroup* FindGroup(const ClusterSpec& spec, const NodeSpec& node) {
    const auto* settings = dynamic_cast<const FakeSettings*>(spec.Settings(kName));
    return settings != nullptr ? settings->Find(node.GroupIn(kName)) : nullptr;
  }

  LocalTransport local_;
};

FLEETPLAN_REGISTER_SETTINGS_PARSER(kName, FakeSettingsParser);
FLEETPLAN_REGISTER_TRANSPORT(kName, FakeTransport);

}  // namespace

const FakeGroup* FakeSettings::Find(absl::string_view name) const {
  for (const FakeGroup& group : groups) {
    if (group.name == name) return &group;
  }
  return nullptr;
}

std::vector<std::string> FakeSettings::GroupNames() const {
  std::vector<std::string> names;
  for (const FakeGroup& group : groups) names.push_back(group.name);
  return names;
}

EnvList FakeSettings::GroupEnv(absl::string_view name) const {
  const FakeGroup* group = Find(name);
  return group != nullptr ? group->env : EnvList{};
}

std::vector<std::pair<std::string, std::string>> FakeSettings::Describe() const {
  std::vector<std::pair<std::string, std::string>> fields;
  for (const FakeGroup& group : groups) {
    fields.emplace_back("fake.name", group.name);
    fields.emplace_back("fake.label", group.label);
    fields.emplace_back("fake.env", absl::StrCat(group.env.size()));
    for (const auto& [name, value] : group.env) fields.emplace_back(name, value);
  }
  return fields;
}

std::vector<std::string> FakeConnectedLabels() {
  absl::MutexLock lock(&labels_mu);
  return *connected_labels;
}

}  // namespace fleetplan
