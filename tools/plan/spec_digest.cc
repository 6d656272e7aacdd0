#include "tools/plan/spec_digest.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "tools/util/digest.h"

namespace fleetplan {
namespace {

// Writes typed fields into a Digester. Every value is preceded by a tag so
// that adjacent fields of different shapes cannot be confused.
class SpecWriter {
 public:
  explicit SpecWriter(Digester& digester) : digester_(digester) {}

  void Str(absl::string_view tag, absl::string_view value) {
    digester_.Add(tag).Add(value);
  }
  void Int(absl::string_view tag, int value) { Str(tag, absl::StrCat(value)); }
  void Bool(absl::string_view tag, bool value) { Str(tag, value ? "1" : "0"); }
  void OptBool(absl::string_view tag, const std::optional<bool>& value) {
    Str(tag, !value.has_value() ? "unset" : (*value ? "1" : "0"));
  }
  void OptInt(absl::string_view tag, const std::optional<int>& value) {
    Str(tag, value.has_value() ? absl::StrCat(*value) : "unset");
  }
  void Strings(absl::string_view tag, const std::vector<std::string>& values) {
    Int(tag, static_cast<int>(values.size()));
    for (const std::string& value : values) digester_.Add(value);
  }
  void Ints(absl::string_view tag, const std::vector<int>& values) {
    Int(tag, static_cast<int>(values.size()));
    for (int value : values) digester_.Add(absl::StrCat(value));
  }
  void Env(absl::string_view tag, const EnvList& env) {
    Int(tag, static_cast<int>(env.size()));
    for (const auto& [name, value] : env) digester_.Add(name).Add(value);
  }

 private:
  Digester& digester_;
};

void WritePython(SpecWriter& w, const PythonEnv& python) {
  w.Int("python.kind", static_cast<int>(python.kind));
  w.Str("python.venv", python.venv);
  w.Str("python.conda", python.conda);
  w.Str("python.conda_sh", python.conda_sh);
}

void WriteNode(SpecWriter& w, const NodeSpec& node) {
  w.Str("node.name", node.name);
  w.Str("node.address", node.address);
  w.Str("node.private_address", node.private_address);
  w.Str("node.transport", node.transport);
  w.Str("node.workdir", node.workdir);
  w.Int("node.groups", static_cast<int>(node.groups.size()));
  for (const auto& [table, group] : node.groups) w.Str(table, group);
  WritePython(w, node.python);
  w.Ints("node.gpus", node.gpus);
  w.Ints("node.cpus", node.cpus);
  w.Bool("node.chief", node.chief);
  w.Int("node.nproc", node.nproc);
  w.Int("node.index", node.index);
  // Only when set: the digest of a spec without spares is as before them.
  if (node.spare) w.Bool("node.spare", true);
}

// A transport's settings are opaque here: they describe themselves.
void WriteSettings(SpecWriter& w, const std::string& name, const TransportSettings& settings) {
  std::vector<std::pair<std::string, std::string>> fields = settings.Describe();
  w.Str("settings", name);
  w.Int("settings.fields", static_cast<int>(fields.size()));
  for (const auto& [field, value] : fields) w.Str(field, value);
}

}  // namespace

std::string SpecDigest(const ClusterSpec& spec) {
  Digester digester;
  SpecWriter w(digester);
  w.Str("spec", "fleetplan-spec/1");
  w.Str("name", spec.name);
  w.Str("spec_path", spec.spec_path);
  w.Int("nodes", static_cast<int>(spec.nodes.size()));
  for (const NodeSpec& node : spec.nodes) WriteNode(w, node);
  w.Bool("keys.distribute", spec.keys.distribute);
  w.Bool("sync.enabled", spec.sync.enabled);
  w.Str("sync.source", spec.sync.source);
  w.Strings("sync.exclude", spec.sync.exclude);
  w.Env("env", spec.env);
  // Where each secret comes from; its value is apply's to read and never
  // part of the spec.
  EnvList secrets;
  for (const SecretSpec& secret : spec.secrets) {
    secrets.emplace_back(secret.name,
                         absl::StrCat(SecretSourceName(secret.source), ":", secret.from));
  }
  w.Env("secrets", secrets);
  w.Str("network.nccl_socket_ifname", spec.network.nccl_socket_ifname);
  w.OptBool("network.ib", spec.network.ib);
  w.OptBool("network.p2p", spec.network.p2p);
  w.Int("network.master_port", spec.network.master_port);
  w.Str("job.program", spec.job.program);
  w.Strings("job.args", spec.job.args);
  w.OptInt("job.nproc_per_node", spec.job.nproc_per_node);
  w.Int("job.restarts", spec.job.restarts);
  w.Int("job.supervisor_port", spec.SupervisorPort());
  w.Int("job.heartbeat_timeout_ms", absl::ToInt64Milliseconds(spec.job.heartbeat_timeout));
  // Only when set: the digest of a spec without it is as before it existed.
  if (spec.job.hang_timeout.has_value()) {
    w.Int("job.hang_timeout_ms", absl::ToInt64Milliseconds(*spec.job.hang_timeout));
  }
  w.Str("job.launcher", LauncherName(spec.job.launcher.launcher));
  w.Str("job.local_rank_arg", spec.job.launcher.local_rank_arg);
  if (!spec.job.progress.empty()) w.Str("job.progress", spec.job.progress);
  // The elastic keys, likewise only when set.
  if (spec.job.min_nodes.has_value()) w.Int("job.min_nodes", *spec.job.min_nodes);
  if (spec.job.max_node_losses.has_value()) {
    w.Int("job.max_node_losses", *spec.job.max_node_losses);
  }
  if (spec.job.rejoin != "restart") w.Str("job.rejoin", spec.job.rejoin);
  w.Int("transport_settings", static_cast<int>(spec.transport_settings.size()));
  for (const auto& [name, settings] : spec.transport_settings) {
    WriteSettings(w, name, *settings);
  }
  return digester.Hex();
}

}  // namespace fleetplan
