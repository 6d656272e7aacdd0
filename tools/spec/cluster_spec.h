#ifndef FLEETPLAN_TOOLS_SPEC_CLUSTER_SPEC_H_
#define FLEETPLAN_TOOLS_SPEC_CLUSTER_SPEC_H_

// The fully resolved cluster spec: what a TOML file says once defaults and
// per-node overrides are applied. Plain data; the parser (spec_parser.h)
// builds it and every later stage only reads it. What only one transport
// reads (its own table) is kept opaque, as that transport's
// TransportSettings, parsed by the transport (settings_parser.h).

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/protocol/launcher_contract.h"

namespace fleetplan {

// An ordered list of environment variables, as written in the spec.
using EnvList = std::vector<std::pair<std::string, std::string>>;

// Where a value came from in the spec file, for error messages.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

// How a node's python environment is activated before ranks start.
struct PythonEnv {
  enum class Kind { kNone, kVenv, kConda };
  Kind kind = Kind::kNone;
  std::string venv;      // kVenv: the venv directory (bin/activate under it)
  std::string conda;     // kConda: the environment's name
  std::string conda_sh;  // kConda: conda.sh, sourced before `conda activate`
};

// What a transport reads from its own table of the spec, opaque to the
// core. A transport's settings parser (settings_parser.h) builds it; the
// transport casts it back to its own type. Immutable once parsed.
class TransportSettings {
 public:
  virtual ~TransportSettings() = default;

  // The groups the table defines, in file order, for a transport whose
  // nodes pick one by a node key named like the table (a node's
  // `<table> = "<group>"` picks [<table>.<group>]). Default: none.
  virtual std::vector<std::string> GroupNames() const { return {}; }

  // What the ranks on the nodes of `group` add to their environment (layer
  // 3 in tools/plan/rank_env.h; `$NAME` in a value is expanded on the node),
  // sorted by name. Default, and for an unknown group: nothing.
  virtual EnvList GroupEnv(absl::string_view group) const { return {}; }

  // Every setting as (name, value), in a fixed order. The spec digest hashes
  // them: a setting left out would let a changed spec pass for a saved plan.
  virtual std::vector<std::pair<std::string, std::string>> Describe() const = 0;

  // The nodes of a spec without [[nodes]] whose [defaults] transport is
  // this table's: placeholder names that the transport resolves to real
  // hosts at apply (TransportSettings of Slurm's `nodes = N`). Default:
  // none, and the spec needs [[nodes]].
  virtual std::vector<std::string> PlaceholderNodes() const { return {}; }
};

// One node, fully resolved.
struct NodeSpec {
  std::string name;             // default: address
  std::string address;          // what apply connects to
  std::string private_address;  // what other nodes reach it by; default: address
  std::string transport;        // the name of a registered transport
  std::string workdir;          // absolute
  // The settings groups the node picks: table name -> group name, from its
  // node keys named like a transport's table (`<table> = "<group>"`).
  std::map<std::string, std::string, std::less<>> groups;
  PythonEnv python;
  std::vector<int> gpus;
  std::vector<int> cpus;
  bool chief = false;
  // Runs no rank until another node is lost, then takes its place (an
  // elastic job, tools/agent/job_coordinator.h). Never the chief.
  bool spare = false;
  int nproc = 1;   // ranks on this node (job.nproc_per_node, else len(gpus), else 1)
  int index = 0;   // position in the file: GROUP_RANK
  SourceLocation location;  // of its [[nodes]] table

  // The group the node picks in `table`'s settings, or "" when none.
  std::string GroupIn(absl::string_view table) const;
};

struct KeysSpec {
  bool distribute = false;
};

struct SyncSpec {
  bool enabled = false;        // true when [sync] is present
  std::string source;          // absolute (resolved against the spec's folder)
  std::vector<std::string> exclude;  // glob patterns, matched per path component
  // "auto": the changed files cross apply's link once, to the chief, whose
  // agent passes them on to the others (from 3 nodes); "off": each node
  // gets them from apply directly.
  bool relay = true;
};

struct NetworkSpec {
  std::string nccl_socket_ifname;  // "", "auto", an interface, or "^lo,docker0"
  std::optional<bool> ib;
  std::optional<bool> p2p;
  int master_port = 29500;
};

struct JobSpec {
  std::string program;  // "//pkg:target" (built and synced) or a path under workdir
  std::vector<std::string> args;
  std::optional<int> nproc_per_node;
  int restarts = 0;  // whole-job restarts
  // The port the chief's launch agent listens on for the other agents'
  // heartbeats; unset: master_port + 1 (ClusterSpec::SupervisorPort).
  std::optional<int> supervisor_port;
  // Silence after which an agent stops its ranks, or the coordinator the job.
  absl::Duration heartbeat_timeout = absl::Seconds(30);
  // No rank of the job progressing this long makes it hung: the stacks of
  // every rank are collected, then the job restarts or fails (124).
  // nullopt: not watched.
  std::optional<absl::Duration> hang_timeout;
  // Which launcher's variables and arguments the ranks see
  // (tools/protocol/launcher_contract.h); local_rank_arg empty: the
  // launcher's own spelling.
  LauncherConfig launcher;
  // A regular expression (RE2) whose first capturing group is a rank's
  // step in a line of its output (tools/protocol/step_pattern.h), for
  // `top`; empty: only the trainer's metric lines report steps.
  std::string progress;
  // An elastic job: the fewest nodes it runs on after losing some (nullopt:
  // every node that is no spare, so a loss ends it), the node losses it
  // survives (nullopt: any, while min_nodes remain), and when a lost node
  // that comes back joins a job below its full size: "restart" (a new
  // generation at once) or "next-failure".
  std::optional<int> min_nodes;
  std::optional<int> max_node_losses;
  std::string rejoin = "restart";

  // True when `program` is a Bazel label, built and synced by apply; the
  // parser has checked that such a label is well formed.
  bool program_is_label() const { return program.rfind("//", 0) == 0; }
};

// A value a rank gets in its environment that the spec names but does not
// hold: apply reads it on the machine it runs on ([secrets]), writes it to
// each node's private secrets file, and nothing else ever shows it.
struct SecretSpec {
  enum class Source { kEnv, kFile, kCommand };
  std::string name;  // the ranks' environment variable
  Source source = Source::kEnv;
  // kEnv: the variable on the machine running apply; kFile: the file's
  // path there (a leading "~/" is the user's home); kCommand: an sh
  // command line whose stdout is the value.
  std::string from;
  SourceLocation location;  // of the entry, for errors that name it
};

// "env", "file" or "command".
absl::string_view SecretSourceName(SecretSpec::Source source);

struct ClusterSpec {
  std::string name;       // default: the spec file's stem
  std::string spec_path;  // absolute path of the spec file
  std::vector<NodeSpec> nodes;
  KeysSpec keys;
  SyncSpec sync;
  EnvList env;  // [env], for every rank on every node, sorted by name
  std::vector<SecretSpec> secrets;  // [secrets], sorted by name
  NetworkSpec network;
  JobSpec job;
  // Each transport's own settings, by its table's name ("[<name>]" or
  // "[<name>.<group>]"); a table the spec does not have is absent.
  std::map<std::string, std::shared_ptr<const TransportSettings>, std::less<>> transport_settings;

  // The chief: the node marked chief, else the only node.
  const NodeSpec& chief() const;
  // The node named `name`, or nullptr when the spec lists none by that name.
  const NodeSpec* FindNode(absl::string_view name) const;
  // True for a job that survives losing nodes: it has spares, or a
  // [job] min_nodes below its nodes that are no spares.
  bool Elastic() const;
  // [job] supervisor_port, else master_port + 1.
  int SupervisorPort() const { return job.supervisor_port.value_or(network.master_port + 1); }
  // The settings read from table `name`, or nullptr when the spec has none.
  const TransportSettings* Settings(absl::string_view name) const;
  // True when table `table`'s settings define `group`.
  bool DefinesGroup(absl::string_view table, absl::string_view group) const;
  // What the ranks of `node` add to their environment from the groups it
  // picks (rank_env.h layer 3; `$NAME` expanded on the node), in table order.
  EnvList GroupEnv(const NodeSpec& node) const;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SPEC_CLUSTER_SPEC_H_
