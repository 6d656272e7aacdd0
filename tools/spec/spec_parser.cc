#include "tools/spec/spec_parser.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "tools/spec/tomlplusplus.h"
#include "tools/spec/settings_parser.h"
#include "tools/spec/spec_errors.h"
#include "tools/spec/toml_reader.h"
#include "tools/protocol/step_pattern.h"
#include "tools/spec/validators.h"
#include "tools/util/did_you_mean.h"
#include "tools/util/path_policy.h"

namespace fleetplan {
namespace {

// The transports' tables, by whether nodes pick groups in them
// (TransportSettingsParser::HasGroups), each sorted by name.
struct SettingsTables {
  std::vector<std::string> grouped;
  std::vector<std::string> single;
};

SettingsTables RegisteredTables() {
  SettingsTables tables;
  for (const std::string& name : SettingsParsers().Names()) {
    (SettingsParsers().Get(name)->HasGroups() ? tables.grouped : tables.single).push_back(name);
  }
  return tables;
}

// Keys every node may set, in [defaults] or in its own [[nodes]] table: a
// key per grouped table picks the node's group in it.
std::vector<std::string> NodeDefaultKeys(const SettingsTables& tables) {
  std::vector<std::string> keys = {"transport", "workdir"};
  keys.insert(keys.end(), tables.grouped.begin(), tables.grouped.end());
  for (const char* key : {"python", "gpus", "cpus"}) keys.push_back(key);
  return keys;
}

std::vector<std::string> NodeKeys(const SettingsTables& tables) {
  std::vector<std::string> keys = NodeDefaultKeys(tables);
  for (const char* key : {"address", "private_address", "chief", "spare", "name"}) {
    keys.push_back(key);
  }
  return keys;
}

// The top-level keys: grouped tables come after the nodes that pick their
// groups, the other transports' tables last, the order they are read in.
std::vector<std::string> RootKeys(const SettingsTables& tables) {
  std::vector<std::string> keys = {"name", "defaults", "nodes"};
  keys.insert(keys.end(), tables.grouped.begin(), tables.grouped.end());
  for (const char* key : {"keys", "sync", "env", "secrets", "network", "job"}) {
    keys.push_back(key);
  }
  keys.insert(keys.end(), tables.single.begin(), tables.single.end());
  return keys;
}

std::string Stem(absl::string_view path) {
  std::string base = Basename(path);
  size_t dot = base.rfind('.');
  if (dot != std::string::npos && dot > 0) base.resize(dot);
  return base;
}

// A node-level value and where the spec set it, so errors point at the
// [defaults] line or the node's own line, whichever applies.
template <typename T>
struct Located {
  std::optional<T> value;  // nullopt when not written, or refused
  Position position;

  bool written() const { return position.line != 0; }
};

struct NodeFields {
  Located<std::string> transport, workdir;
  std::map<std::string, Located<std::string>> groups;  // by table name
  Located<PythonEnv> python;
  Located<std::vector<int>> gpus, cpus;

  Located<std::string> Group(const std::string& table) const {
    auto it = groups.find(table);
    return it == groups.end() ? Located<std::string>{} : it->second;
  }
};

// Walks the TOML document, checking types and keys, and records every
// problem in SpecErrors instead of stopping at the first.
class SpecReader {
 public:
  SpecReader(absl::string_view text, const std::string& path)
      : text_(text),
        path_(path),
        errors_(text, path),
        reader_(errors_),
        tables_(RegisteredTables()) {}

  absl::StatusOr<ClusterSpec> Read();

 private:
  std::optional<PythonEnv> Python(const toml::node& node, absl::string_view key);

  void ReadNodeFields(const toml::table& table, absl::string_view prefix, NodeFields* fields);
  void ReadNodes(const toml::node* nodes, const NodeFields& defaults, ClusterSpec* spec);
  // The placeholder nodes that the settings of [defaults] transport give
  // (TransportSettings::PlaceholderNodes); none without such settings.
  std::vector<std::string> PlaceholderNodes(const NodeFields& defaults,
                                            const ClusterSpec& spec) const;
  // Nodes named `names` that take everything from [defaults]; the first is
  // the chief.
  void AddPlaceholderNodes(const std::vector<std::string>& names, const NodeFields& defaults,
                           ClusterSpec* spec);
  // A node's own keys: address, private_address, name, chief, spare.
  void ReadNodeIdentity(const toml::table& table, const std::string& prefix, NodeSpec* node,
                        std::map<std::string, Position>* positions);
  // What a node takes from [defaults] unless it sets its own: transport,
  // workdir, groups, python, gpus, cpus.
  void ResolveNodeFields(const toml::table& table, const std::string& prefix,
                         const NodeFields& defaults, const NodeFields& own, NodeSpec* node,
                         std::map<std::string, Position>* positions);
  // A hostname, IPv4 or IPv6 address, or an error at `value`.
  std::optional<std::string> ReadAddress(const toml::node& value, const std::string& key);
  void ReadSettings(const toml::table& root, const std::vector<std::string>& names,
                    ClusterSpec* spec);
  void ReadSync(const toml::node& sync, ClusterSpec* spec);
  void ReadNetwork(const toml::node& network, ClusterSpec* spec);
  // [secrets]: NAME = { env = "VAR" } | { file = "PATH" } | { command = "CMD" }.
  void ReadSecrets(const toml::node& secrets, ClusterSpec* spec);
  std::optional<SecretSpec> ReadSecret(const std::string& name, const toml::node& entry,
                                       const std::string& key);
  void ReadJob(const toml::node& job, ClusterSpec* spec);
  void ReadLauncher(const toml::table& job, JobSpec* spec);
  void ReadProgress(const toml::table& job, JobSpec* spec);
  void ReadElastic(const toml::table& job, JobSpec* spec);
  void CheckElastic(const ClusterSpec& spec);
  void CheckCluster(const toml::table& root, const ClusterSpec& spec);
  void CheckGroups(const ClusterSpec& spec, const NodeSpec& node);

  absl::string_view text_;
  std::string path_;
  SpecErrors errors_;
  TomlReader reader_;
  SettingsTables tables_;
  // Where each node's values were written, by node index.
  std::vector<std::map<std::string, Position>> node_positions_;
  Position job_position_;
  Position min_nodes_position_;
  bool defaults_workdir_refused_ = false;  // said once, not per node
};

std::optional<PythonEnv> SpecReader::Python(const toml::node& node, absl::string_view key) {
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    reader_.ExpectType(node, key,
                       "a table: { venv = \"...\" } or { conda = \"...\", conda_sh = \"...\" }");
    return std::nullopt;
  }
  reader_.CheckKeys(*table, absl::StrCat(key, "."), {"venv", "conda", "conda_sh"});
  PythonEnv python;
  const toml::node* venv = table->get("venv");
  const toml::node* conda = table->get("conda");
  const toml::node* conda_sh = table->get("conda_sh");
  if ((venv != nullptr) == (conda != nullptr)) {
    reader_.Error(node, key, "expected exactly one of `venv` or `conda`");
    return std::nullopt;
  }
  if (venv != nullptr) {
    if (conda_sh != nullptr) {
      reader_.Error(*conda_sh, absl::StrCat(key, ".conda_sh"), "only used with `conda`");
    }
    std::optional<std::string> path = reader_.String(*venv, absl::StrCat(key, ".venv"));
    if (!path) return std::nullopt;
    python.kind = PythonEnv::Kind::kVenv;
    python.venv = *path;
    return python;
  }
  std::optional<std::string> name = reader_.String(*conda, absl::StrCat(key, ".conda"));
  if (conda_sh == nullptr) {
    reader_.Error(node, key,
                  "`conda` needs `conda_sh`, the conda.sh to source before `conda activate`");
    return std::nullopt;
  }
  std::optional<std::string> script = reader_.String(*conda_sh, absl::StrCat(key, ".conda_sh"));
  if (!name || !script) return std::nullopt;
  python.kind = PythonEnv::Kind::kConda;
  python.conda = *name;
  python.conda_sh = *script;
  return python;
}

void SpecReader::ReadNodeFields(const toml::table& table, absl::string_view prefix,
                                NodeFields* fields) {
  auto read_string = [&](const char* key, Located<std::string>* out) {
    if (const toml::node* node = table.get(key)) {
      out->position = PositionOf(node->source());
      out->value = reader_.String(*node, absl::StrCat(prefix, key));
    }
  };
  read_string("transport", &fields->transport);
  read_string("workdir", &fields->workdir);
  for (const std::string& group_table : tables_.grouped) {
    read_string(group_table.c_str(), &fields->groups[group_table]);
  }
  if (const toml::node* node = table.get("python")) {
    fields->python.position = PositionOf(node->source());
    fields->python.value = Python(*node, absl::StrCat(prefix, "python"));
  }
  for (auto [key, out] : {std::pair{"gpus", &fields->gpus}, std::pair{"cpus", &fields->cpus}}) {
    if (const toml::node* node = table.get(key)) {
      out->position = PositionOf(node->source());
      out->value = reader_.IdList(*node, absl::StrCat(prefix, key));
    }
  }
}

// Later layers win: a node's own value over [defaults].
template <typename T>
Located<T> Override(const Located<T>& base, const Located<T>& over) {
  return over.value ? over : base;
}

void SpecReader::ReadNodes(const toml::node* nodes, const NodeFields& defaults,
                           ClusterSpec* spec) {
  if (nodes == nullptr) {
    reader_.Error(Position{1, 1}, "nodes", "at least one [[nodes]] entry is required");
    return;
  }
  const toml::array* array = nodes->as_array();
  if (array == nullptr || !array->is_array_of_tables()) {
    reader_.ExpectType(*nodes, "nodes", "an array of tables ([[nodes]])");
    return;
  }
  const std::vector<std::string> allowed = NodeKeys(tables_);
  int index = 0;
  for (const toml::node& element : *array) {
    const toml::table& table = *element.as_table();
    std::string prefix = absl::StrCat("nodes[", index, "].");
    reader_.CheckKeys(table, prefix, allowed);
    NodeSpec node;
    node.index = index;
    node.location = SourceLocation{path_, static_cast<int>(table.source().begin.line),
                                   static_cast<int>(table.source().begin.column)};
    std::map<std::string, Position> positions;
    positions["node"] = PositionOf(table.source());
    ReadNodeIdentity(table, prefix, &node, &positions);
    NodeFields own;
    ReadNodeFields(table, prefix, &own);
    ResolveNodeFields(table, prefix, defaults, own, &node, &positions);
    spec->nodes.push_back(std::move(node));
    node_positions_.push_back(std::move(positions));
    ++index;
  }
}

std::vector<std::string> SpecReader::PlaceholderNodes(const NodeFields& defaults,
                                                      const ClusterSpec& spec) const {
  if (!defaults.transport.value) return {};
  const TransportSettings* settings = spec.Settings(*defaults.transport.value);
  return settings != nullptr ? settings->PlaceholderNodes() : std::vector<std::string>{};
}

void SpecReader::AddPlaceholderNodes(const std::vector<std::string>& names,
                                     const NodeFields& defaults, ClusterSpec* spec) {
  const toml::table none;
  for (size_t i = 0; i < names.size(); ++i) {
    NodeSpec node;
    node.index = static_cast<int>(i);
    node.name = node.address = node.private_address = names[i];
    node.chief = i == 0;
    node.location = SourceLocation{path_, defaults.transport.position.line,
                                   defaults.transport.position.column};
    std::map<std::string, Position> positions;
    positions["node"] = positions["address"] = positions["name"] = defaults.transport.position;
    ResolveNodeFields(none, "defaults.", defaults, NodeFields{}, &node, &positions);
    spec->nodes.push_back(std::move(node));
    node_positions_.push_back(std::move(positions));
  }
}

std::optional<std::string> SpecReader::ReadAddress(const toml::node& value,
                                                   const std::string& key) {
  std::optional<std::string> address = reader_.String(value, key);
  if (address.has_value() && !IsValidAddress(*address)) {
    reader_.Error(value, key,
                  absl::StrCat("\"", *address, "\" is not a valid hostname, IPv4 or IPv6 address"));
  }
  return address;
}

void SpecReader::ReadNodeIdentity(const toml::table& table, const std::string& prefix,
                                  NodeSpec* node, std::map<std::string, Position>* positions) {
  if (const toml::node* address = table.get("address")) {
    (*positions)["address"] = PositionOf(address->source());
    node->address = ReadAddress(*address, prefix + "address").value_or("");
  } else {
    reader_.Error(table, prefix + "address", "missing: every node needs an address");
  }
  node->private_address = node->address;
  if (const toml::node* address = table.get("private_address")) {
    if (std::optional<std::string> value = ReadAddress(*address, prefix + "private_address")) {
      node->private_address = *value;
    }
  }
  node->name = node->address;
  if (const toml::node* name = table.get("name")) {
    (*positions)["name"] = PositionOf(name->source());
    if (std::optional<std::string> value = reader_.String(*name, prefix + "name")) {
      if (value->empty()) {
        reader_.Error(*name, prefix + "name", "must not be empty");
      } else {
        node->name = *value;
      }
    }
  } else {
    (*positions)["name"] = (*positions)["address"];
  }
  if (const toml::node* chief = table.get("chief")) {
    (*positions)["chief"] = PositionOf(chief->source());
    node->chief = reader_.Bool(*chief, prefix + "chief").value_or(false);
  }
  if (const toml::node* spare = table.get("spare")) {
    (*positions)["spare"] = PositionOf(spare->source());
    node->spare = reader_.Bool(*spare, prefix + "spare").value_or(false);
  }
}

void SpecReader::ResolveNodeFields(const toml::table& table, const std::string& prefix,
                                   const NodeFields& defaults, const NodeFields& own,
                                   NodeSpec* node, std::map<std::string, Position>* positions) {
  Located<std::string> transport = Override(defaults.transport, own.transport);
  node->transport = transport.value.value_or("local");
  if (!IsLowercaseIdentifier(node->transport)) {
    reader_.Error(transport.position, prefix + "transport",
                  absl::StrCat("\"", node->transport,
                               "\" is not a transport name (expected a lowercase name such as "
                               "\"local\", \"ssh\" or \"docker\")"));
  }
  (*positions)["transport"] = transport.value ? transport.position : (*positions)["node"];
  Located<std::string> workdir = Override(defaults.workdir, own.workdir);
  if (!workdir.value) {
    // A workdir written but refused has its error already.
    if (!defaults.workdir.written() && !own.workdir.written()) {
      reader_.Error(table, prefix + "workdir",
                    "missing: set `workdir` (an absolute path) in [defaults] or on the node");
    }
  } else {
    node->workdir = *workdir.value;
    // [defaults]' workdir is every node's that sets none: refused once.
    bool inherited = !own.workdir.written();
    if (!IsCleanAbsolutePath(node->workdir) && !(inherited && defaults_workdir_refused_)) {
      reader_.Error(
          workdir.position, inherited ? "defaults.workdir" : prefix + "workdir",
          absl::StrCat("\"", node->workdir,
                       "\" must be an absolute path without \".\" or \"..\" components",
                       absl::StartsWith(node->workdir, "~")
                           ? " (the same on every node, such as \"/home/ubuntu/project\": `~` "
                             "is not expanded)"
                           : ""));
      defaults_workdir_refused_ |= inherited;
    }
    while (node->workdir.size() > 1 && node->workdir.back() == '/') node->workdir.pop_back();
  }
  for (const std::string& group_table : tables_.grouped) {
    Located<std::string> group = Override(defaults.Group(group_table), own.Group(group_table));
    // `ssh = ""` picks no group, as leaving the key out does.
    if (!group.value || group.value->empty()) continue;
    node->groups[group_table] = *group.value;
    (*positions)["group " + group_table] = group.position;
  }
  node->python = Override(defaults.python, own.python).value.value_or(PythonEnv{});
  node->gpus = Override(defaults.gpus, own.gpus).value.value_or(std::vector<int>{});
  node->cpus = Override(defaults.cpus, own.cpus).value.value_or(std::vector<int>{});
}

void SpecReader::ReadSettings(const toml::table& root, const std::vector<std::string>& names,
                              ClusterSpec* spec) {
  for (const std::string& name : names) {
    const toml::node* table = root.get(name);
    if (table == nullptr) continue;
    std::shared_ptr<const TransportSettings> settings =
        SettingsParsers().Get(name)->Parse(*table, reader_);
    if (settings != nullptr) spec->transport_settings[name] = std::move(settings);
  }
}

void SpecReader::ReadSync(const toml::node& sync, ClusterSpec* spec) {
  const toml::table* table = sync.as_table();
  if (table == nullptr) {
    reader_.ExpectType(sync, "sync", "a table");
    return;
  }
  reader_.CheckKeys(*table, "sync.", {"source", "exclude", "relay"});
  spec->sync.enabled = true;
  std::string source = ".";
  if (const toml::node* node = table->get("source")) {
    source = reader_.String(*node, "sync.source").value_or(".");
  }
  spec->sync.source = NormalizeAbsolutePath(
      absl::StartsWith(source, "/") ? source : absl::StrCat(Dirname(path_), "/", source));
  if (const toml::node* node = table->get("exclude")) {
    spec->sync.exclude =
        reader_.StringList(*node, "sync.exclude").value_or(std::vector<std::string>{});
  }
  if (const toml::node* node = table->get("relay")) {
    if (std::optional<std::string> relay = reader_.String(*node, "sync.relay")) {
      if (*relay == "auto" || *relay == "off") {
        spec->sync.relay = *relay == "auto";
      } else {
        reader_.Error(*node, "sync.relay",
                      absl::StrCat("\"", *relay, "\" is not a relay mode (expected \"auto\" or \"off\")"));
      }
    }
  }
}

void SpecReader::ReadNetwork(const toml::node& network, ClusterSpec* spec) {
  const toml::table* table = network.as_table();
  if (table == nullptr) {
    reader_.ExpectType(network, "network", "a table");
    return;
  }
  reader_.CheckKeys(*table, "network.", {"nccl_socket_ifname", "ib", "p2p", "master_port"});
  if (const toml::node* node = table->get("nccl_socket_ifname")) {
    if (std::optional<std::string> value = reader_.String(*node, "network.nccl_socket_ifname")) {
      spec->network.nccl_socket_ifname = *value;
      if (!IsValidIfnameSpec(*value)) {
        reader_.Error(
            *node, "network.nccl_socket_ifname",
            absl::StrCat("\"", *value,
                         "\" is not an interface spec (expected \"auto\", an interface such "
                         "as \"ens3\", a list \"eth,ib\", or an exclusion \"^lo,docker0\")"));
      }
    }
  }
  if (const toml::node* node = table->get("ib"))
    spec->network.ib = reader_.Bool(*node, "network.ib");
  if (const toml::node* node = table->get("p2p"))
    spec->network.p2p = reader_.Bool(*node, "network.p2p");
  if (const toml::node* node = table->get("master_port")) {
    spec->network.master_port = reader_.Port(*node, "network.master_port").value_or(29500);
  }
}

void SpecReader::ReadSecrets(const toml::node& secrets, ClusterSpec* spec) {
  const toml::table* table = secrets.as_table();
  if (table == nullptr) {
    reader_.ExpectType(secrets, "secrets", "a table of NAME = { env | file | command = \"...\" }");
    return;
  }
  for (const auto& [name_key, entry] : *table) {
    std::string name(name_key.str());
    std::string key = absl::StrCat("secrets.", name);
    if (!IsValidEnvName(name)) {
      Position at = PositionOf(name_key.source());
      if (at.line == 0) at = PositionOf(entry.source());
      reader_.Error(at, key,
                    "not a valid environment variable name (expected letters, digits and "
                    "_, not starting with a digit)");
      continue;
    }
    if (std::optional<SecretSpec> secret = ReadSecret(name, entry, key)) {
      spec->secrets.push_back(std::move(*secret));
    }
  }
  // A rank gets one value per name: the spec's or the secret, never a
  // silent choice between them.
  for (const SecretSpec& secret : spec->secrets) {
    for (const auto& [name, value] : spec->env) {
      if (name != secret.name) continue;
      reader_.Error(Position{secret.location.line, secret.location.column},
                    absl::StrCat("secrets.", secret.name),
                    "is also set in [env]; a rank's variable comes from one of them");
    }
  }
}

std::optional<SecretSpec> SpecReader::ReadSecret(const std::string& name,
                                                 const toml::node& entry,
                                                 const std::string& key) {
  static constexpr absl::string_view kExpected =
      "a table with one source: { env = \"VAR\" }, { file = \"PATH\" } or "
      "{ command = \"CMD\" }";
  const toml::table* table = entry.as_table();
  if (table == nullptr) {
    reader_.ExpectType(entry, key, kExpected);
    return std::nullopt;
  }
  reader_.CheckKeys(*table, absl::StrCat(key, "."), {"env", "file", "command"});
  SecretSpec secret;
  secret.name = name;
  Position at = PositionOf(entry.source());
  secret.location = SourceLocation{path_, at.line, at.column};
  int sources = 0;
  const toml::node* from = nullptr;
  for (auto [source_key, source] :
       {std::pair{"env", SecretSpec::Source::kEnv}, std::pair{"file", SecretSpec::Source::kFile},
        std::pair{"command", SecretSpec::Source::kCommand}}) {
    if (const toml::node* node = table->get(source_key)) {
      ++sources;
      from = node;
      secret.source = source;
    }
  }
  if (sources != 1) {
    reader_.Error(entry, key, absl::StrCat("expected exactly one of `env`, `file` or `command`"));
    return std::nullopt;
  }
  std::string from_key = absl::StrCat(key, ".", SecretSourceName(secret.source));
  std::optional<std::string> text = reader_.String(*from, from_key);
  if (!text) return std::nullopt;
  if (text->empty()) {
    reader_.Error(*from, from_key, "must not be empty");
    return std::nullopt;
  }
  if (secret.source == SecretSpec::Source::kEnv && !IsValidEnvName(*text)) {
    reader_.Error(*from, from_key,
                  absl::StrCat("\"", *text, "\" is not an environment variable name"));
    return std::nullopt;
  }
  secret.from = *text;
  return secret;
}

void SpecReader::ReadJob(const toml::node& job, ClusterSpec* spec) {
  const toml::table* table = job.as_table();
  if (table == nullptr) {
    reader_.ExpectType(job, "job", "a table");
    return;
  }
  job_position_ = PositionOf(job.source());
  reader_.CheckKeys(*table, "job.",
                    {"program", "args", "nproc_per_node", "restarts", "supervisor_port",
                     "heartbeat_timeout", "hang_timeout", "launcher", "local_rank_arg",
                     "progress", "min_nodes", "max_node_losses", "rejoin"});
  if (const toml::node* node = table->get("program")) {
    if (std::optional<std::string> program = reader_.String(*node, "job.program")) {
      spec->job.program = *program;
      if (program->empty()) {
        reader_.Error(*node, "job.program", "must not be empty");
      } else if (absl::StartsWith(*program, "//") && !IsValidBazelLabel(*program)) {
        reader_.Error(*node, "job.program",
                      absl::StrCat("\"", *program,
                                   "\" is not a valid Bazel label (expected //package:target)"));
      } else if (absl::StartsWith(*program, "@")) {
        reader_.Error(*node, "job.program",
                      "labels of other repositories cannot be built for nodes (expected "
                      "//package:target or a path under workdir)");
      }
    }
  } else {
    reader_.Error(job, "job.program",
                  "missing: a Bazel label (//trainer:train) or a path under workdir");
  }
  if (const toml::node* node = table->get("args")) {
    spec->job.args = reader_.StringList(*node, "job.args", Controls::kTabNewline)
                         .value_or(std::vector<std::string>{});
  }
  if (const toml::node* node = table->get("nproc_per_node")) {
    if (std::optional<int64_t> nproc = reader_.Integer(*node, "job.nproc_per_node")) {
      if (*nproc < 1 || *nproc > 4096) {
        reader_.Error(*node, "job.nproc_per_node",
                      absl::StrCat(*nproc, " is out of range (expected 1 to 4096 ranks per node)"));
      } else {
        spec->job.nproc_per_node = static_cast<int>(*nproc);
      }
    }
  }
  if (const toml::node* node = table->get("restarts")) {
    if (std::optional<int64_t> restarts = reader_.Integer(*node, "job.restarts")) {
      if (*restarts < 0 || *restarts > 1000) {
        reader_.Error(*node, "job.restarts",
                      absl::StrCat(*restarts, " is out of range (expected 0 to 1000)"));
      } else {
        spec->job.restarts = static_cast<int>(*restarts);
      }
    }
  }
  if (const toml::node* node = table->get("supervisor_port")) {
    spec->job.supervisor_port = reader_.Port(*node, "job.supervisor_port");
  }
  if (const toml::node* node = table->get("heartbeat_timeout")) {
    if (std::optional<std::string> text = reader_.String(*node, "job.heartbeat_timeout")) {
      absl::Duration timeout;
      if (!absl::ParseDuration(*text, &timeout) || timeout < absl::Seconds(1) ||
          timeout > absl::Hours(1)) {
        reader_.Error(*node, "job.heartbeat_timeout",
                      absl::StrCat("\"", *text,
                                   "\" is not a duration from 1s to 1h (expected e.g. "
                                   "\"30s\" or \"2m\")"));
      } else {
        spec->job.heartbeat_timeout = timeout;
      }
    }
  }
  if (const toml::node* node = table->get("hang_timeout")) {
    if (std::optional<std::string> text = reader_.String(*node, "job.hang_timeout")) {
      absl::Duration timeout;
      if (!absl::ParseDuration(*text, &timeout) || timeout < absl::Seconds(5) ||
          timeout > absl::Hours(24)) {
        reader_.Error(*node, "job.hang_timeout",
                      absl::StrCat("\"", *text,
                                   "\" is not a duration from 5s to 24h (expected e.g. "
                                   "\"10m\" or \"90s\")"));
      } else {
        spec->job.hang_timeout = timeout;
      }
    }
  }
  ReadLauncher(*table, &spec->job);
  ReadProgress(*table, &spec->job);
  ReadElastic(*table, &spec->job);
}

// min_nodes, max_node_losses, rejoin: an elastic job. min_nodes is checked
// against the nodes in CheckElastic, once they are all read.
void SpecReader::ReadElastic(const toml::table& job, JobSpec* spec) {
  if (const toml::node* node = job.get("min_nodes")) {
    min_nodes_position_ = PositionOf(node->source());
    if (std::optional<int64_t> count = reader_.Integer(*node, "job.min_nodes")) {
      if (*count < 1 || *count > 100000) {
        reader_.Error(*node, "job.min_nodes",
                      absl::StrCat(*count, " is out of range (expected at least 1 node)"));
      } else {
        spec->min_nodes = static_cast<int>(*count);
      }
    }
  }
  if (const toml::node* node = job.get("max_node_losses")) {
    if (std::optional<int64_t> count = reader_.Integer(*node, "job.max_node_losses")) {
      if (*count < 0 || *count > 1000000) {
        reader_.Error(*node, "job.max_node_losses",
                      absl::StrCat(*count, " is out of range (expected 0 or more; leave it out "
                                           "for any number)"));
      } else {
        spec->max_node_losses = static_cast<int>(*count);
      }
    }
  }
  const toml::node* node = job.get("rejoin");
  if (node == nullptr) return;
  std::optional<std::string> when = reader_.String(*node, "job.rejoin");
  if (!when.has_value()) return;
  std::vector<std::string> known = {"restart", "next-failure"};
  if (std::find(known.begin(), known.end(), *when) == known.end()) {
    reader_.Error(*node, "job.rejoin",
                  absl::StrCat("\"", *when, "\" is not a choice (expected \"restart\" or "
                               "\"next-failure\")", DidYouMean(*when, known)));
  } else {
    spec->rejoin = *when;
  }
}

// The chief coordinates, so it is never a spare; min_nodes counts the nodes
// that are no spares.
void SpecReader::CheckElastic(const ClusterSpec& spec) {
  int regular = 0;
  for (const NodeSpec& node : spec.nodes) {
    if (!node.spare) {
      ++regular;
      continue;
    }
    if (node.chief || spec.nodes.size() == 1) {
      reader_.Error(node_positions_[node.index]["spare"],
                    absl::StrCat("nodes[", node.index, "].spare"),
                    "the chief cannot be a spare: its agent coordinates the job, and its loss "
                    "ends it");
    }
  }
  if (spec.job.min_nodes.has_value() && *spec.job.min_nodes > regular) {
    reader_.Error(min_nodes_position_, "job.min_nodes",
                  absl::StrCat(*spec.job.min_nodes, " is more than the ", regular,
                               " nodes that are no spares"));
  }
}

// `progress`: a regular expression whose first group is a rank's step.
void SpecReader::ReadProgress(const toml::table& job, JobSpec* spec) {
  const toml::node* node = job.get("progress");
  if (node == nullptr) return;
  std::optional<std::string> regex = reader_.String(*node, "job.progress");
  if (!regex.has_value()) return;
  if (regex->empty()) {
    reader_.Error(*node, "job.progress",
                  "must not be empty (expected a regular expression such as \"step (\\\\d+)\")");
  } else if (std::string error = ProgressPatternError(*regex); !error.empty()) {
    reader_.Error(*node, "job.progress",
                  absl::StrCat("\"", *regex, "\" is not a progress pattern: ", error));
  } else {
    spec->progress = *regex;
  }
}

// `-x`, `--local_rank`, `--local-rank`: a name a script's argparse declares.
bool IsOptionName(absl::string_view arg) {
  if (!absl::ConsumePrefix(&arg, "-")) return false;
  absl::ConsumePrefix(&arg, "-");
  if (arg.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(arg[0]))) return false;
  return std::all_of(arg.begin(), arg.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

void SpecReader::ReadLauncher(const toml::table& job, JobSpec* spec) {
  if (const toml::node* node = job.get("launcher")) {
    if (std::optional<std::string> name = reader_.String(*node, "job.launcher")) {
      if (std::optional<Launcher> launcher = ParseLauncher(*name)) {
        spec->launcher.launcher = *launcher;
      } else {
        std::vector<std::string> names = LauncherNames();
        reader_.Error(*node, "job.launcher",
                      absl::StrCat("\"", *name, "\" is not a launcher (expected one of: ",
                                   absl::StrJoin(names, ", "), ")", DidYouMean(*name, names)));
      }
    }
  }
  const toml::node* node = job.get("local_rank_arg");
  if (node == nullptr) return;
  std::optional<std::string> arg = reader_.String(*node, "job.local_rank_arg");
  if (!arg.has_value()) return;
  if (!IsOptionName(*arg)) {
    reader_.Error(*node, "job.local_rank_arg",
                  absl::StrCat("\"", *arg,
                               "\" is not an option name (expected e.g. \"--local_rank\")"));
  } else if (DefaultLocalRankArg(spec->launcher.launcher).empty()) {
    reader_.Error(*node, "job.local_rank_arg",
                  absl::StrCat("launcher \"", LauncherName(spec->launcher.launcher),
                               "\" passes no local-rank argument; set launcher = "
                               "\"distributed-launch\" or \"deepspeed\", or remove this key"));
  } else {
    spec->launcher.local_rank_arg = *arg;
  }
}

// Rules across nodes and sections, once every value has been read.
void SpecReader::CheckCluster(const toml::table& root, const ClusterSpec& spec) {
  const NodeSpec* chief = nullptr;
  std::map<std::string, const NodeSpec*> by_address, by_name;
  std::set<std::string> transports;
  for (const NodeSpec& node : spec.nodes) {
    auto& positions = node_positions_[node.index];
    std::string prefix = absl::StrCat("nodes[", node.index, "].");
    if (node.chief) {
      if (chief != nullptr) {
        reader_.Error(positions["chief"], prefix + "chief",
                      absl::StrCat("only one node may be the chief; node '", chief->name,
                                   "' (line ", chief->location.line, ") already is"));
      } else {
        chief = &node;
        if (node.index != 0) {
          reader_.Error(
              positions["chief"], prefix + "chief",
              "the chief must be the first [[nodes]] entry: ranks are numbered in file order "
              "and rank 0 serves the rendezvous at MASTER_ADDR, the chief's address");
        }
      }
    }
    if (!node.address.empty()) {
      auto [it, inserted] = by_address.emplace(node.address, &node);
      if (!inserted) {
        reader_.Error(positions["address"], prefix + "address",
                      absl::StrCat("\"", node.address, "\" is already the address of node '",
                                   it->second->name, "' (line ", it->second->location.line, ")"));
      }
      auto [name_it, name_inserted] = by_name.emplace(node.name, &node);
      if (!name_inserted && inserted) {
        reader_.Error(positions["name"], prefix + "name",
                      absl::StrCat("\"", node.name, "\" is already the name of node at line ",
                                   name_it->second->location.line));
      }
    }
    CheckGroups(spec, node);
    transports.insert(node.transport);
  }
  if (spec.nodes.size() > 1 && chief == nullptr) {
    reader_.Error(
        node_positions_[0]["node"], "nodes",
        "exactly one node must set `chief = true` when there is more than one node; none does");
  }
  for (const std::string& name : SettingsParsers().Names()) {
    if (transports.count(name) == 0) continue;
    const toml::node* table = root.get(name);
    SettingsParsers().Get(name)->CheckUse(table != nullptr ? table->as_table() : nullptr,
                                          spec.Settings(name), reader_);
  }
}

// Each group a node picks must be defined in its table.
void SpecReader::CheckGroups(const ClusterSpec& spec, const NodeSpec& node) {
  auto& positions = node_positions_[node.index];
  for (const auto& [table, group] : node.groups) {
    if (spec.DefinesGroup(table, group)) continue;
    const TransportSettings* settings = spec.Settings(table);
    std::vector<std::string> defined;
    if (settings != nullptr) defined = settings->GroupNames();
    reader_.Error(positions["group " + table], absl::StrCat("nodes[", node.index, "].", table),
                  absl::StrCat("no [", table, ".", group, "] group is defined",
                               defined.empty()
                                   ? std::string()
                                   : absl::StrCat(" (defined: ", absl::StrJoin(defined, ", "), ")"),
                               DidYouMean(group, defined)));
  }
}

absl::StatusOr<ClusterSpec> SpecReader::Read() {
  toml::parse_result parsed = toml::parse(std::string_view(text_.data(), text_.size()), path_);
  if (!parsed) {
    const toml::parse_error& error = parsed.error();
    Position at = PositionOf(error.source());
    errors_.Add(at.line, at.column, "", absl::StrCat("invalid TOML: ", std::string(error.description())));
    return errors_.ToStatus();
  }
  const toml::table& root = parsed.table();
  reader_.CheckKeys(root, "", RootKeys(tables_));
  ClusterSpec spec;
  spec.spec_path = path_;
  spec.name = Stem(path_);
  if (const toml::node* name = root.get("name"))
    spec.name = reader_.String(*name, "name").value_or(spec.name);

  NodeFields defaults;
  if (const toml::node* node = root.get("defaults")) {
    if (const toml::table* table = node->as_table()) {
      reader_.CheckKeys(*table, "defaults.", NodeDefaultKeys(tables_));
      ReadNodeFields(*table, "defaults.", &defaults);
    } else {
      reader_.ExpectType(*node, "defaults", "a table");
    }
  }
  // Tables whose groups nodes pick are read before the nodes, the others
  // after [job]: errors keep the order the reader has always reported them in.
  ReadSettings(root, tables_.grouped, &spec);
  const toml::node* nodes = root.get("nodes");
  std::vector<std::string> placeholders;
  if (nodes == nullptr) {
    // A transport may give the nodes by count ([slurm] nodes = 3): its
    // table is then read first, and the nodes are its placeholders.
    ReadSettings(root, tables_.single, &spec);
    placeholders = PlaceholderNodes(defaults, spec);
  }
  if (placeholders.empty()) {
    ReadNodes(nodes, defaults, &spec);
  } else {
    AddPlaceholderNodes(placeholders, defaults, &spec);
  }
  if (const toml::node* node = root.get("keys")) {
    if (const toml::table* table = node->as_table()) {
      reader_.CheckKeys(*table, "keys.", {"distribute"});
      if (const toml::node* distribute = table->get("distribute")) {
        spec.keys.distribute = reader_.Bool(*distribute, "keys.distribute").value_or(false);
      }
    } else {
      reader_.ExpectType(*node, "keys", "a table");
    }
  }
  if (const toml::node* node = root.get("sync")) ReadSync(*node, &spec);
  if (const toml::node* node = root.get("env")) spec.env = reader_.Env(*node, "env");
  if (const toml::node* node = root.get("secrets")) ReadSecrets(*node, &spec);
  if (const toml::node* node = root.get("network")) ReadNetwork(*node, &spec);
  if (const toml::node* node = root.get("job")) {
    ReadJob(*node, &spec);
  } else {
    reader_.Error(Position{1, 1}, "job", "missing: a [job] table with `program`");
  }
  if (nodes != nullptr) {
    ReadSettings(root, tables_.single, &spec);
    if (!PlaceholderNodes(defaults, spec).empty()) {
      reader_.Error(*nodes, "nodes",
                    absl::StrCat("[", *defaults.transport.value,
                                 "] nodes gives the node count already: give a count or "
                                 "name the nodes in [[nodes]], not both"));
    }
  }
  for (NodeSpec& node : spec.nodes) {
    node.nproc = spec.job.nproc_per_node.value_or(node.gpus.empty() ? 1 : static_cast<int>(node.gpus.size()));
  }
  CheckCluster(root, spec);
  CheckElastic(spec);
  if (!errors_.empty()) return errors_.ToStatus();
  return spec;
}

}  // namespace

absl::StatusOr<ClusterSpec> ParseSpec(absl::string_view text, const std::string& path) {
  return SpecReader(text, path).Read();
}

absl::StatusOr<ClusterSpec> LoadSpecFile(const std::string& path) {
  std::string absolute = path;
  if (!absl::StartsWith(path, "/")) {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) == nullptr) {
      return absl::InternalError("cannot read the current directory");
    }
    absolute = absl::StrCat(cwd, "/", path);
  }
  absolute = NormalizeAbsolutePath(absolute);
  // An ifstream opens a directory and reads it as empty, which would be
  // reported as a spec without nodes.
  struct stat info;
  if (stat(absolute.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(absolute, ": is a directory, not a spec file"));
  }
  std::ifstream file(absolute, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat(absolute, ": cannot read the spec file"));
  std::stringstream text;
  text << file.rdbuf();
  return ParseSpec(text.str(), absolute);
}

}  // namespace fleetplan
