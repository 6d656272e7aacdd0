#ifndef FLEETPLAN_TOOLS_SPEC_CLUSTER_SPEC_H_
#define FLEETPLAN_TOOLS_SPEC_CLUSTER_SPEC_H_

// The fully resolved cluster spec: what a TOML file says once defaults,
// per-node overrides and named ssh groups are applied. Plain data; the
// parser (spec_parser.h) builds it and every later stage only reads it.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"

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

// A named [ssh.<name>] group: how apply reaches a set of nodes, and the
// environment those nodes' ranks get.
struct SshGroup {
  std::string name;
  std::string user;         // empty: ~/.ssh/config or the local user
  int port = 0;             // 0: ~/.ssh/config or 22
  std::string key_file;     // on the machine that runs apply; "~" unexpanded
  std::string known_hosts;  // empty: ~/.ssh/known_hosts
  EnvList env;              // sorted by name; `$VAR` is expanded on the node
};

// One node, fully resolved.
struct NodeSpec {
  std::string name;             // default: address
  std::string address;          // what apply connects to
  std::string private_address;  // what other nodes reach it by; default: address
  std::string transport;        // "ssh" | "local" | "docker" | any registered
  std::string workdir;          // absolute
  std::string ssh_group;        // name of an SshGroup, or empty
  PythonEnv python;
  std::vector<int> gpus;
  std::vector<int> cpus;
  bool chief = false;
  int nproc = 1;   // ranks on this node (job.nproc_per_node, else len(gpus), else 1)
  int index = 0;   // position in the file: GROUP_RANK
  SourceLocation location;  // of its [[nodes]] table
};

struct KeysSpec {
  bool distribute = false;
};

struct SyncSpec {
  bool enabled = false;        // true when [sync] is present
  std::string source;          // absolute (resolved against the spec's folder)
  std::vector<std::string> exclude;  // glob patterns, matched per path component
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

  // True when `program` is a Bazel label, built and synced by apply; the
  // parser has checked that such a label is well formed.
  bool program_is_label() const { return program.rfind("//", 0) == 0; }
};

struct DockerSpec {
  std::string image;
  std::string network;
  bool create = false;
};

struct ClusterSpec {
  std::string name;       // default: the spec file's stem
  std::string spec_path;  // absolute path of the spec file
  std::vector<NodeSpec> nodes;
  std::vector<SshGroup> ssh_groups;  // in file order
  KeysSpec keys;
  SyncSpec sync;
  EnvList env;  // [env], for every rank on every node, sorted by name
  NetworkSpec network;
  JobSpec job;
  DockerSpec docker;

  // The chief: the node marked chief, else the only node.
  const NodeSpec& chief() const;
  // [job] supervisor_port, else master_port + 1.
  int SupervisorPort() const { return job.supervisor_port.value_or(network.master_port + 1); }
  // The group named `name`, or nullptr.
  const SshGroup* FindSshGroup(const std::string& name) const;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SPEC_CLUSTER_SPEC_H_
