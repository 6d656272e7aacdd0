#include "tools/spec/spec_parser.h"

#include <unistd.h>

#include <climits>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "tools/spec/spec_errors.h"
#include "tools/spec/validators.h"
#include "tools/util/did_you_mean.h"
#include "toml++/toml.h"

namespace fleetplan {
namespace {

// Keys every node may set, in [defaults] or in its own [[nodes]] table.
const std::vector<std::string>& NodeDefaultKeys() {
  static const auto* keys = new std::vector<std::string>{
      "transport", "workdir", "ssh", "python", "gpus", "cpus"};
  return *keys;
}

std::vector<std::string> NodeKeys() {
  std::vector<std::string> keys = NodeDefaultKeys();
  for (const char* key : {"address", "private_address", "chief", "name"}) {
    keys.push_back(key);
  }
  return keys;
}

struct Position {
  int line = 0;
  int column = 0;
};

Position PositionOf(const toml::source_region& region) {
  return Position{static_cast<int>(region.begin.line),
                  static_cast<int>(region.begin.column)};
}

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

// Lexically normalises an absolute path: no ".", "..", or repeated "/".
std::string NormalizePath(absl::string_view path) {
  std::vector<absl::string_view> parts;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  return absl::StrCat("/", absl::StrJoin(parts, "/"));
}

std::string Dirname(absl::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos || slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string Stem(absl::string_view path) {
  size_t slash = path.rfind('/');
  absl::string_view base = slash == absl::string_view::npos ? path : path.substr(slash + 1);
  size_t dot = base.rfind('.');
  if (dot != absl::string_view::npos && dot > 0) base = base.substr(0, dot);
  return std::string(base);
}

// A node-level value and where the spec set it, so errors point at the
// [defaults] line or the node's own line, whichever applies.
template <typename T>
struct Located {
  std::optional<T> value;
  Position position;
};

struct NodeFields {
  Located<std::string> transport, workdir, ssh;
  Located<PythonEnv> python;
  Located<std::vector<int>> gpus, cpus;
};

// Walks the TOML document, checking types and keys, and records every
// problem in SpecErrors instead of stopping at the first.
class SpecReader {
 public:
  SpecReader(absl::string_view text, const std::string& path)
      : text_(text), path_(path), errors_(text, path) {}

  absl::StatusOr<ClusterSpec> Read();

 private:
  void Error(const toml::node& node, absl::string_view key, absl::string_view message) {
    Position at = PositionOf(node.source());
    errors_.Add(at.line, at.column, key, message);
  }
  void Error(Position at, absl::string_view key, absl::string_view message) {
    errors_.Add(at.line, at.column, key, message);
  }
  void ExpectType(const toml::node& node, absl::string_view key, absl::string_view expected) {
    Error(node, key, absl::StrCat("expected ", expected, ", got ", TypeName(node)));
  }

  // Reports keys of `table` not in `allowed`, with a suggestion.
  void CheckKeys(const toml::table& table, absl::string_view prefix,
                 const std::vector<std::string>& allowed);

  std::optional<std::string> String(const toml::node& node, absl::string_view key);
  std::optional<bool> Bool(const toml::node& node, absl::string_view key);
  std::optional<int64_t> Integer(const toml::node& node, absl::string_view key);
  std::optional<int> Port(const toml::node& node, absl::string_view key);
  std::optional<std::vector<int>> IdList(const toml::node& node, absl::string_view key);
  std::optional<std::vector<std::string>> StringList(const toml::node& node,
                                                     absl::string_view key);
  EnvList Env(const toml::node& node, absl::string_view key);
  std::optional<PythonEnv> Python(const toml::node& node, absl::string_view key);

  void ReadNodeFields(const toml::table& table, absl::string_view prefix, NodeFields* fields);
  void ReadNodes(const toml::node* nodes, const NodeFields& defaults, ClusterSpec* spec);
  void ReadSshGroups(const toml::node& ssh, ClusterSpec* spec);
  void ReadSync(const toml::node& sync, ClusterSpec* spec);
  void ReadNetwork(const toml::node& network, ClusterSpec* spec);
  void ReadJob(const toml::node& job, ClusterSpec* spec);
  void ReadDocker(const toml::node& docker, ClusterSpec* spec);
  void CheckCluster(const ClusterSpec& spec);

  absl::string_view text_;
  std::string path_;
  SpecErrors errors_;
  // Where each node's values were written, by node index.
  std::vector<std::map<std::string, Position>> node_positions_;
  Position job_position_;
  Position docker_position_;
};

void SpecReader::CheckKeys(const toml::table& table, absl::string_view prefix,
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

std::optional<std::string> SpecReader::String(const toml::node& node, absl::string_view key) {
  if (const auto* value = node.as_string()) return value->get();
  ExpectType(node, key, "a string");
  return std::nullopt;
}

std::optional<bool> SpecReader::Bool(const toml::node& node, absl::string_view key) {
  if (const auto* value = node.as_boolean()) return value->get();
  ExpectType(node, key, "true or false");
  return std::nullopt;
}

std::optional<int64_t> SpecReader::Integer(const toml::node& node, absl::string_view key) {
  if (const auto* value = node.as_integer()) return value->get();
  ExpectType(node, key, "an integer");
  return std::nullopt;
}

std::optional<int> SpecReader::Port(const toml::node& node, absl::string_view key) {
  std::optional<int64_t> port = Integer(node, key);
  if (!port) return std::nullopt;
  if (*port < 1 || *port > 65535) {
    Error(node, key, absl::StrCat("port ", *port, " is out of range (expected 1 to 65535)"));
    return std::nullopt;
  }
  return static_cast<int>(*port);
}

std::optional<std::vector<int>> SpecReader::IdList(const toml::node& node,
                                                   absl::string_view key) {
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

std::optional<std::vector<std::string>> SpecReader::StringList(const toml::node& node,
                                                               absl::string_view key) {
  const toml::array* array = node.as_array();
  if (array == nullptr) {
    ExpectType(node, key, "an array of strings");
    return std::nullopt;
  }
  std::vector<std::string> values;
  for (const toml::node& element : *array) {
    if (std::optional<std::string> value = String(element, key)) values.push_back(*value);
  }
  return values;
}

EnvList SpecReader::Env(const toml::node& node, absl::string_view key) {
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
    if (std::optional<std::string> text = String(value, full_key)) {
      env.emplace_back(name, *text);
    }
  }
  return env;
}

std::optional<PythonEnv> SpecReader::Python(const toml::node& node, absl::string_view key) {
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    ExpectType(node, key, "a table: { venv = \"...\" } or { conda = \"...\", conda_sh = \"...\" }");
    return std::nullopt;
  }
  CheckKeys(*table, absl::StrCat(key, "."), {"venv", "conda", "conda_sh"});
  PythonEnv python;
  const toml::node* venv = table->get("venv");
  const toml::node* conda = table->get("conda");
  const toml::node* conda_sh = table->get("conda_sh");
  if ((venv != nullptr) == (conda != nullptr)) {
    Error(node, key, "expected exactly one of `venv` or `conda`");
    return std::nullopt;
  }
  if (venv != nullptr) {
    if (conda_sh != nullptr) Error(*conda_sh, absl::StrCat(key, ".conda_sh"), "only used with `conda`");
    std::optional<std::string> path = String(*venv, absl::StrCat(key, ".venv"));
    if (!path) return std::nullopt;
    python.kind = PythonEnv::Kind::kVenv;
    python.venv = *path;
    return python;
  }
  std::optional<std::string> name = String(*conda, absl::StrCat(key, ".conda"));
  if (conda_sh == nullptr) {
    Error(node, key, "`conda` needs `conda_sh`, the conda.sh to source before `conda activate`");
    return std::nullopt;
  }
  std::optional<std::string> script = String(*conda_sh, absl::StrCat(key, ".conda_sh"));
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
      out->value = String(*node, absl::StrCat(prefix, key));
    }
  };
  read_string("transport", &fields->transport);
  read_string("workdir", &fields->workdir);
  read_string("ssh", &fields->ssh);
  if (const toml::node* node = table.get("python")) {
    fields->python.position = PositionOf(node->source());
    fields->python.value = Python(*node, absl::StrCat(prefix, "python"));
  }
  for (auto [key, out] : {std::pair{"gpus", &fields->gpus}, std::pair{"cpus", &fields->cpus}}) {
    if (const toml::node* node = table.get(key)) {
      out->position = PositionOf(node->source());
      out->value = IdList(*node, absl::StrCat(prefix, key));
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
    Error(Position{1, 1}, "nodes", "at least one [[nodes]] entry is required");
    return;
  }
  const toml::array* array = nodes->as_array();
  if (array == nullptr || !array->is_array_of_tables()) {
    ExpectType(*nodes, "nodes", "an array of tables ([[nodes]])");
    return;
  }
  const std::vector<std::string> allowed = NodeKeys();
  int index = 0;
  for (const toml::node& element : *array) {
    const toml::table& table = *element.as_table();
    std::string prefix = absl::StrCat("nodes[", index, "].");
    CheckKeys(table, prefix, allowed);
    NodeSpec node;
    node.index = index;
    node.location = SourceLocation{path_, static_cast<int>(table.source().begin.line),
                                   static_cast<int>(table.source().begin.column)};
    std::map<std::string, Position> positions;
    positions["node"] = PositionOf(table.source());
    if (const toml::node* address = table.get("address")) {
      positions["address"] = PositionOf(address->source());
      if (std::optional<std::string> value = String(*address, prefix + "address")) {
        node.address = *value;
        if (!IsValidAddress(node.address)) {
          Error(*address, prefix + "address",
                absl::StrCat("\"", node.address, "\" is not a valid hostname, IPv4 or IPv6 address"));
        }
      }
    } else {
      Error(table, prefix + "address", "missing: every node needs an address");
    }
    node.private_address = node.address;
    if (const toml::node* address = table.get("private_address")) {
      if (std::optional<std::string> value = String(*address, prefix + "private_address")) {
        node.private_address = *value;
        if (!IsValidAddress(*value)) {
          Error(*address, prefix + "private_address",
                absl::StrCat("\"", *value, "\" is not a valid hostname, IPv4 or IPv6 address"));
        }
      }
    }
    node.name = node.address;
    if (const toml::node* name = table.get("name")) {
      positions["name"] = PositionOf(name->source());
      if (std::optional<std::string> value = String(*name, prefix + "name")) {
        if (value->empty()) {
          Error(*name, prefix + "name", "must not be empty");
        } else {
          node.name = *value;
        }
      }
    } else {
      positions["name"] = positions["address"];
    }
    if (const toml::node* chief = table.get("chief")) {
      positions["chief"] = PositionOf(chief->source());
      node.chief = Bool(*chief, prefix + "chief").value_or(false);
    }

    NodeFields own;
    ReadNodeFields(table, prefix, &own);
    Located<std::string> transport = Override(defaults.transport, own.transport);
    node.transport = transport.value.value_or("local");
    if (!IsLowercaseIdentifier(node.transport)) {
      Error(transport.position, prefix + "transport",
            absl::StrCat("\"", node.transport,
                         "\" is not a transport name (expected a lowercase name such as "
                         "\"local\", \"ssh\" or \"docker\")"));
    }
    positions["transport"] = transport.value ? transport.position : positions["node"];
    Located<std::string> workdir = Override(defaults.workdir, own.workdir);
    if (!workdir.value) {
      Error(table, prefix + "workdir",
            "missing: set `workdir` (an absolute path) in [defaults] or on the node");
    } else {
      node.workdir = *workdir.value;
      if (!IsCleanAbsolutePath(node.workdir)) {
        Error(workdir.position, prefix + "workdir",
              absl::StrCat("\"", node.workdir,
                           "\" must be an absolute path without \".\" or \"..\" components"));
      }
      while (node.workdir.size() > 1 && node.workdir.back() == '/') node.workdir.pop_back();
    }
    Located<std::string> ssh = Override(defaults.ssh, own.ssh);
    if (ssh.value) {
      node.ssh_group = *ssh.value;
      positions["ssh"] = ssh.position;
    }
    node.python = Override(defaults.python, own.python).value.value_or(PythonEnv{});
    node.gpus = Override(defaults.gpus, own.gpus).value.value_or(std::vector<int>{});
    node.cpus = Override(defaults.cpus, own.cpus).value.value_or(std::vector<int>{});
    spec->nodes.push_back(std::move(node));
    node_positions_.push_back(std::move(positions));
    ++index;
  }
}

void SpecReader::ReadSshGroups(const toml::node& ssh, ClusterSpec* spec) {
  const toml::table* groups = ssh.as_table();
  if (groups == nullptr) {
    ExpectType(ssh, "ssh", "tables of named groups ([ssh.<name>])");
    return;
  }
  for (const auto& [name_key, node] : *groups) {
    std::string name(name_key.str());
    std::string prefix = absl::StrCat("ssh.", name, ".");
    const toml::table* table = node.as_table();
    if (table == nullptr) {
      ExpectType(node, absl::StrCat("ssh.", name), "a table ([ssh.<name>] with user, port, ...)");
      continue;
    }
    CheckKeys(*table, prefix, {"user", "port", "key_file", "known_hosts", "env"});
    SshGroup group;
    group.name = name;
    if (const toml::node* user = table->get("user")) {
      if (std::optional<std::string> value = String(*user, prefix + "user")) {
        group.user = *value;
        if (!IsValidUserName(*value)) {
          Error(*user, prefix + "user",
                absl::StrCat("\"", *value,
                             "\" is not a valid user name (expected lowercase letters, digits, "
                             "_ and -, not starting with a digit or -)"));
        }
      }
    }
    if (const toml::node* port = table->get("port")) {
      group.port = Port(*port, prefix + "port").value_or(0);
    }
    if (const toml::node* key_file = table->get("key_file")) {
      group.key_file = String(*key_file, prefix + "key_file").value_or("");
    }
    if (const toml::node* known_hosts = table->get("known_hosts")) {
      group.known_hosts = String(*known_hosts, prefix + "known_hosts").value_or("");
    }
    if (const toml::node* env = table->get("env")) group.env = Env(*env, prefix + "env");
    spec->ssh_groups.push_back(std::move(group));
  }
}

void SpecReader::ReadSync(const toml::node& sync, ClusterSpec* spec) {
  const toml::table* table = sync.as_table();
  if (table == nullptr) {
    ExpectType(sync, "sync", "a table");
    return;
  }
  CheckKeys(*table, "sync.", {"source", "exclude"});
  spec->sync.enabled = true;
  std::string source = ".";
  if (const toml::node* node = table->get("source")) {
    source = String(*node, "sync.source").value_or(".");
  }
  spec->sync.source = NormalizePath(
      absl::StartsWith(source, "/") ? source : absl::StrCat(Dirname(path_), "/", source));
  if (const toml::node* node = table->get("exclude")) {
    spec->sync.exclude = StringList(*node, "sync.exclude").value_or(std::vector<std::string>{});
  }
}

void SpecReader::ReadNetwork(const toml::node& network, ClusterSpec* spec) {
  const toml::table* table = network.as_table();
  if (table == nullptr) {
    ExpectType(network, "network", "a table");
    return;
  }
  CheckKeys(*table, "network.", {"nccl_socket_ifname", "ib", "p2p", "master_port"});
  if (const toml::node* node = table->get("nccl_socket_ifname")) {
    if (std::optional<std::string> value = String(*node, "network.nccl_socket_ifname")) {
      spec->network.nccl_socket_ifname = *value;
      if (!IsValidIfnameSpec(*value)) {
        Error(*node, "network.nccl_socket_ifname",
              absl::StrCat("\"", *value,
                           "\" is not an interface spec (expected \"auto\", an interface such "
                           "as \"ens3\", a list \"eth,ib\", or an exclusion \"^lo,docker0\")"));
      }
    }
  }
  if (const toml::node* node = table->get("ib")) spec->network.ib = Bool(*node, "network.ib");
  if (const toml::node* node = table->get("p2p")) spec->network.p2p = Bool(*node, "network.p2p");
  if (const toml::node* node = table->get("master_port")) {
    spec->network.master_port = Port(*node, "network.master_port").value_or(29500);
  }
}

void SpecReader::ReadJob(const toml::node& job, ClusterSpec* spec) {
  const toml::table* table = job.as_table();
  if (table == nullptr) {
    ExpectType(job, "job", "a table");
    return;
  }
  job_position_ = PositionOf(job.source());
  CheckKeys(*table, "job.",
            {"program", "args", "nproc_per_node", "restarts", "supervisor_port",
             "heartbeat_timeout"});
  if (const toml::node* node = table->get("program")) {
    if (std::optional<std::string> program = String(*node, "job.program")) {
      spec->job.program = *program;
      if (program->empty()) {
        Error(*node, "job.program", "must not be empty");
      } else if (absl::StartsWith(*program, "//") && !IsValidBazelLabel(*program)) {
        Error(*node, "job.program",
              absl::StrCat("\"", *program,
                           "\" is not a valid Bazel label (expected //package:target)"));
      } else if (absl::StartsWith(*program, "@")) {
        Error(*node, "job.program",
              "labels of other repositories cannot be built for nodes (expected "
              "//package:target or a path under workdir)");
      }
    }
  } else {
    Error(job, "job.program", "missing: a Bazel label (//trainer:train) or a path under workdir");
  }
  if (const toml::node* node = table->get("args")) {
    spec->job.args = StringList(*node, "job.args").value_or(std::vector<std::string>{});
  }
  if (const toml::node* node = table->get("nproc_per_node")) {
    if (std::optional<int64_t> nproc = Integer(*node, "job.nproc_per_node")) {
      if (*nproc < 1 || *nproc > 4096) {
        Error(*node, "job.nproc_per_node",
              absl::StrCat(*nproc, " is out of range (expected 1 to 4096 ranks per node)"));
      } else {
        spec->job.nproc_per_node = static_cast<int>(*nproc);
      }
    }
  }
  if (const toml::node* node = table->get("restarts")) {
    if (std::optional<int64_t> restarts = Integer(*node, "job.restarts")) {
      if (*restarts < 0 || *restarts > 1000) {
        Error(*node, "job.restarts",
              absl::StrCat(*restarts, " is out of range (expected 0 to 1000)"));
      } else {
        spec->job.restarts = static_cast<int>(*restarts);
      }
    }
  }
  if (const toml::node* node = table->get("supervisor_port")) {
    spec->job.supervisor_port = Port(*node, "job.supervisor_port");
  }
  if (const toml::node* node = table->get("heartbeat_timeout")) {
    if (std::optional<std::string> text = String(*node, "job.heartbeat_timeout")) {
      absl::Duration timeout;
      if (!absl::ParseDuration(*text, &timeout) || timeout < absl::Seconds(1) ||
          timeout > absl::Hours(1)) {
        Error(*node, "job.heartbeat_timeout",
              absl::StrCat("\"", *text,
                           "\" is not a duration from 1s to 1h (expected e.g. \"30s\" or "
                           "\"2m\")"));
      } else {
        spec->job.heartbeat_timeout = timeout;
      }
    }
  }
}

void SpecReader::ReadDocker(const toml::node& docker, ClusterSpec* spec) {
  const toml::table* table = docker.as_table();
  if (table == nullptr) {
    ExpectType(docker, "docker", "a table");
    return;
  }
  docker_position_ = PositionOf(docker.source());
  CheckKeys(*table, "docker.", {"image", "network", "create"});
  if (const toml::node* node = table->get("image")) {
    spec->docker.image = String(*node, "docker.image").value_or("");
  }
  if (const toml::node* node = table->get("network")) {
    spec->docker.network = String(*node, "docker.network").value_or("");
  }
  if (const toml::node* node = table->get("create")) {
    spec->docker.create = Bool(*node, "docker.create").value_or(false);
  }
}

// Rules across nodes and sections, once every value has been read.
void SpecReader::CheckCluster(const ClusterSpec& spec) {
  const NodeSpec* chief = nullptr;
  std::map<std::string, const NodeSpec*> by_address, by_name;
  std::vector<std::string> group_names;
  for (const SshGroup& group : spec.ssh_groups) group_names.push_back(group.name);
  bool uses_docker = false;
  for (const NodeSpec& node : spec.nodes) {
    auto& positions = node_positions_[node.index];
    std::string prefix = absl::StrCat("nodes[", node.index, "].");
    if (node.chief) {
      if (chief != nullptr) {
        Error(positions["chief"], prefix + "chief",
              absl::StrCat("only one node may be the chief; node '", chief->name, "' (line ",
                           chief->location.line, ") already is"));
      } else {
        chief = &node;
        if (node.index != 0) {
          Error(positions["chief"], prefix + "chief",
                "the chief must be the first [[nodes]] entry: ranks are numbered in file order "
                "and rank 0 serves the rendezvous at MASTER_ADDR, the chief's address");
        }
      }
    }
    if (!node.address.empty()) {
      auto [it, inserted] = by_address.emplace(node.address, &node);
      if (!inserted) {
        Error(positions["address"], prefix + "address",
              absl::StrCat("\"", node.address, "\" is already the address of node '",
                           it->second->name, "' (line ", it->second->location.line, ")"));
      }
      auto [name_it, name_inserted] = by_name.emplace(node.name, &node);
      if (!name_inserted && inserted) {
        Error(positions["name"], prefix + "name",
              absl::StrCat("\"", node.name, "\" is already the name of node at line ",
                           name_it->second->location.line));
      }
    }
    if (!node.ssh_group.empty() && spec.FindSshGroup(node.ssh_group) == nullptr) {
      Error(positions["ssh"], prefix + "ssh",
            absl::StrCat("no [ssh.", node.ssh_group, "] group is defined",
                         group_names.empty() ? std::string()
                                             : absl::StrCat(" (defined: ",
                                                            absl::StrJoin(group_names, ", "), ")"),
                         DidYouMean(node.ssh_group, group_names)));
    }
    if (node.transport == "docker") uses_docker = true;
  }
  if (spec.nodes.size() > 1 && chief == nullptr) {
    Error(node_positions_[0]["node"], "nodes",
          "exactly one node must set `chief = true` when there is more than one node; none does");
  }
  if (uses_docker && spec.docker.image.empty()) {
    Error(docker_position_.line > 0 ? docker_position_ : Position{1, 1}, "docker.image",
          "missing: nodes with transport \"docker\" need [docker] image");
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
  CheckKeys(root, "",
            {"name", "defaults", "nodes", "ssh", "keys", "sync", "env", "network", "job",
             "docker"});
  ClusterSpec spec;
  spec.spec_path = path_;
  spec.name = Stem(path_);
  if (const toml::node* name = root.get("name")) spec.name = String(*name, "name").value_or(spec.name);

  NodeFields defaults;
  if (const toml::node* node = root.get("defaults")) {
    if (const toml::table* table = node->as_table()) {
      CheckKeys(*table, "defaults.", NodeDefaultKeys());
      ReadNodeFields(*table, "defaults.", &defaults);
    } else {
      ExpectType(*node, "defaults", "a table");
    }
  }
  if (const toml::node* node = root.get("ssh")) ReadSshGroups(*node, &spec);
  ReadNodes(root.get("nodes"), defaults, &spec);
  if (const toml::node* node = root.get("keys")) {
    if (const toml::table* table = node->as_table()) {
      CheckKeys(*table, "keys.", {"distribute"});
      if (const toml::node* distribute = table->get("distribute")) {
        spec.keys.distribute = Bool(*distribute, "keys.distribute").value_or(false);
      }
    } else {
      ExpectType(*node, "keys", "a table");
    }
  }
  if (const toml::node* node = root.get("sync")) ReadSync(*node, &spec);
  if (const toml::node* node = root.get("env")) spec.env = Env(*node, "env");
  if (const toml::node* node = root.get("network")) ReadNetwork(*node, &spec);
  if (const toml::node* node = root.get("job")) {
    ReadJob(*node, &spec);
  } else {
    Error(Position{1, 1}, "job", "missing: a [job] table with `program`");
  }
  if (const toml::node* node = root.get("docker")) ReadDocker(*node, &spec);
  for (NodeSpec& node : spec.nodes) {
    node.nproc = spec.job.nproc_per_node.value_or(node.gpus.empty() ? 1 : static_cast<int>(node.gpus.size()));
  }
  CheckCluster(spec);
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
  absolute = NormalizePath(absolute);
  std::ifstream file(absolute, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat(absolute, ": cannot read the spec file"));
  std::stringstream text;
  text << file.rdbuf();
  return ParseSpec(text.str(), absolute);
}

}  // namespace fleetplan
