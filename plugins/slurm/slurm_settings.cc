#include "plugins/slurm/slurm_settings.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "re2/re2.h"
#include "tools/spec/settings_parser.h"

namespace fleetplan {
namespace {

constexpr char kTable[] = "slurm";
// More nodes than any partition of this decade; a typo's zeros stop here.
constexpr int kMaxNodes = 100000;

// Slurm's own spellings: a partition or account name, and --time
// ("minutes", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS", and no
// limit as "UNLIMITED", "INFINITE" or -1, in any case, as Slurm's
// time_str2mins reads them).
bool IsSlurmName(const std::string& value) {
  static const RE2* pattern = new RE2(R"([A-Za-z0-9_][A-Za-z0-9_.\-]*)");
  return RE2::FullMatch(value, *pattern);
}
bool IsSlurmTime(const std::string& value) {
  static const RE2* pattern =
      new RE2(R"((?i)(\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d+(:\d{1,2}){0,2})"
              R"(|-1|unlimited|infinite))");
  return RE2::FullMatch(value, *pattern);
}

class SlurmSettingsParser : public TransportSettingsParser {
 public:
  std::shared_ptr<const TransportSettings> Parse(const toml::node& slurm,
                                                 TomlReader& reader) const override {
    auto settings = std::make_shared<SlurmSettings>();
    const toml::table* table = slurm.as_table();
    if (table == nullptr) {
      reader.ExpectType(slurm, "slurm", "a table");
      return settings;
    }
    reader.CheckKeys(*table, "slurm.",
                     {"partition", "nodes", "time", "account", "gpus_per_node", "sbatch",
                      "salloc"});
    ReadName(*table, "partition", reader, &settings->partition);
    ReadName(*table, "account", reader, &settings->account);
    if (const toml::node* node = table->get("time")) {
      std::string time = reader.String(*node, "slurm.time").value_or("");
      if (!time.empty() && !IsSlurmTime(time)) {
        reader.Error(*node, "slurm.time",
                     absl::StrCat("\"", time, "\" is not a Slurm time limit (expected minutes, "
                                  "\"HH:MM:SS\", \"D-HH:MM:SS\" or \"UNLIMITED\")"));
      } else {
        settings->time = time;
      }
    }
    settings->nodes = ReadCount(*table, "nodes", 1, kMaxNodes, reader);
    settings->gpus_per_node = ReadCount(*table, "gpus_per_node", 0, 1024, reader);
    ReadAllocationOptions(*table, reader, &settings->sbatch);
    return settings;
  }

 private:
  // `sbatch = [...]` or its older name `salloc` (not both): options as
  // written, each "--name=value".
  static void ReadAllocationOptions(const toml::table& table, TomlReader& reader,
                                    std::vector<std::string>* out) {
    const toml::node* sbatch = table.get("sbatch");
    const toml::node* salloc = table.get("salloc");
    if (sbatch != nullptr && salloc != nullptr) {
      reader.Error(*salloc, "slurm.salloc",
                   "give the allocation options once, as slurm.sbatch (salloc is its older name)");
      return;
    }
    const toml::node* node = sbatch != nullptr ? sbatch : salloc;
    if (node == nullptr) return;
    const std::string key = sbatch != nullptr ? "slurm.sbatch" : "slurm.salloc";
    std::vector<std::string> options =
        reader.StringList(*node, key).value_or(std::vector<std::string>{});
    for (const std::string& option : options) {
      if (option.rfind("-", 0) != 0) {
        reader.Error(*node, key,
                     absl::StrCat("\"", option, "\" is not an option (expected \"--name=value\")"));
        return;
      }
    }
    *out = options;
  }

  static void ReadName(const toml::table& table, const char* key, TomlReader& reader,
                       std::string* out) {
    const toml::node* node = table.get(key);
    if (node == nullptr) return;
    std::string full = absl::StrCat("slurm.", key);
    std::string value = reader.String(*node, full).value_or("");
    if (!value.empty() && !IsSlurmName(value)) {
      reader.Error(*node, full, absl::StrCat("\"", value, "\" is not a Slurm ", key, " name"));
      return;
    }
    *out = value;
  }

  static int ReadCount(const toml::table& table, const char* key, int low, int high,
                       TomlReader& reader) {
    const toml::node* node = table.get(key);
    if (node == nullptr) return 0;
    std::string full = absl::StrCat("slurm.", key);
    std::optional<int64_t> value = reader.Integer(*node, full);
    if (!value) return 0;
    if (*value < low || *value > high) {
      reader.Error(*node, full, absl::StrCat(*value, " is out of range (expected ", low, " to ",
                                             high, ")"));
      return 0;
    }
    return static_cast<int>(*value);
  }
};

FLEETPLAN_REGISTER_SETTINGS_PARSER(kTable, SlurmSettingsParser);

}  // namespace

std::vector<std::pair<std::string, std::string>> SlurmSettings::Describe() const {
  return {{"slurm.partition", partition},
          {"slurm.nodes", absl::StrCat(nodes)},
          {"slurm.time", time},
          {"slurm.account", account},
          {"slurm.gpus_per_node", absl::StrCat(gpus_per_node)},
          {"slurm.sbatch", absl::StrJoin(sbatch, "\x1f")}};
}

std::string PlaceholderNodeName(int index) { return absl::StrCat("slurm-", index); }

std::vector<std::string> SlurmSettings::PlaceholderNodes() const {
  std::vector<std::string> names;
  for (int i = 0; i < nodes; ++i) names.push_back(PlaceholderNodeName(i));
  return names;
}

const SlurmSettings& SlurmSettingsOf(const ClusterSpec& spec) {
  static const SlurmSettings* defaults = new SlurmSettings;
  const auto* settings = dynamic_cast<const SlurmSettings*>(spec.Settings(kTable));
  return settings != nullptr ? *settings : *defaults;
}

}  // namespace fleetplan
