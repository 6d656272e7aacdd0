#ifndef FLEETPLAN_PLUGINS_TRANSPORT_H_
#define FLEETPLAN_PLUGINS_TRANSPORT_H_

// The transport extension point: how apply reaches a node. One plugin per
// folder under plugins/, registered by name (FLEETPLAN_REGISTER_TRANSPORT);
// a spec's `transport` key picks one through TransportRegistry. Core code
// includes this header only, never a plugin's.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "tools/spec/cluster_spec.h"
#include "tools/util/named_registry.h"

namespace fleetplan {

// A command to run on a node.
struct CommandSpec {
  std::string command;  // run by /bin/sh -c on the node
  EnvList env;          // added to the node's environment
  std::string cwd;      // empty: the transport's default
  // Keeps the command's stdin open until it ends or the run is cancelled;
  // the launch agent takes end-of-file on stdin as "stop every rank".
  bool hold_stdin = false;
  // The command starts the node's launch agent, which must outlive it (the
  // launch phase sets it on every node at once). A transport whose commands
  // end what they started when they return (a Slurm job step) starts the
  // agents where they may stay.
  bool launches_agent = false;
  // A short command on a few small files of the workdir's .fleetplan
  // folder that uses neither `env`, `cwd` nor stdin (the state lock's): a
  // transport whose every command costs a round trip of its own (a Slurm
  // job step) may run it in a shell it already holds open on the node, or
  // on this machine where it sees that folder as the node does.
  bool brief = false;
};

// How long a cancelled command is given to end after its stdin closes
// before it is sent SIGTERM: `grace` for a command that holds stdin (the
// agent stops its ranks on end-of-file); none for the others, which never
// read it.
inline absl::Duration StdinGraceFor(const CommandSpec& command, absl::Duration grace) {
  return command.hold_stdin ? grace : absl::ZeroDuration();
}

// Receives the command's output (stdout and stderr) as it arrives, in
// chunks that need not end at line boundaries. Called from one thread at a
// time.
using OutputCallback = std::function<void(absl::string_view chunk)>;

// A file to upload: where it is on this machine, where it goes relative to
// the destination root, and its mode.
struct FileToSend {
  std::string local_path;  // absolute, on the machine that runs apply
  std::string path;        // relative to the destination root
  uint32_t mode = 0644;
  uint64_t size = 0;
};

// A command that apply talks with over its stdin and stdout (the launch
// agent's apply session). Used by one thread at a time.
class CommandStream {
 public:
  virtual ~CommandStream() = default;

  // Sends `bytes` to the command's stdin. Unavailable when the channel broke.
  virtual absl::Status Write(absl::string_view bytes) = 0;

  // What the command printed on stdout since the last call, waiting up to
  // `timeout` for something: "" when nothing came in time. OutOfRange once
  // stdout ended (the command exited); Unavailable when the channel broke.
  virtual absl::StatusOr<std::string> Read(absl::Duration timeout) = 0;

  // What the command printed on stderr so far (for saying why it ended).
  virtual std::string ErrorOutput() = 0;
};

// An open channel to one node, reused by every step of an apply. A
// Connection is used by one thread at a time.
class Connection {
 public:
  virtual ~Connection() = default;

  // Runs `command` and returns its exit status (128 + N when killed by
  // signal N). Once `cancel` (may be null) is notified, the command's stdin
  // is closed and it is stopped. Errors: Unavailable when the node cannot be
  // reached or the channel breaks, Internal for anything else.
  virtual absl::StatusOr<int> Run(const CommandSpec& command,
                                  const OutputCallback& on_output,
                                  const absl::Notification* cancel) = 0;

  // Reads a file on the node. NotFound when it does not exist.
  virtual absl::StatusOr<std::string> ReadFile(const std::string& path) = 0;

  // Reads several small files, each as ReadFile would, in order. A
  // transport where each read costs a round trip overrides it to read them
  // all in one (the step records apply reads before its phases).
  virtual std::vector<absl::StatusOr<std::string>> ReadFiles(
      const std::vector<std::string>& paths) {
    std::vector<absl::StatusOr<std::string>> contents;
    contents.reserve(paths.size());
    for (const std::string& path : paths) contents.push_back(ReadFile(path));
    return contents;
  }

  // Writes a file on the node atomically (temporary file, then rename),
  // creating its parent directories.
  virtual absl::Status WriteFile(const std::string& path,
                                 absl::string_view content, uint32_t mode) = 0;

  // Copies `files` from this machine to `remote_root` on the node, creating
  // directories and keeping modes; existing files are replaced.
  virtual absl::Status PutFiles(const std::vector<FileToSend>& files,
                                const std::string& remote_root) = 0;

  // PutFiles, returning the bytes that left this machine for it: less than
  // the files' sizes when the transport found some already in place (a
  // workdir the nodes share, filled by another node's connection). Default:
  // all of them.
  virtual absl::StatusOr<uint64_t> PutFilesCounting(const std::vector<FileToSend>& files,
                                                    const std::string& remote_root);

  // Removes files (paths relative to `remote_root`); missing ones are fine.
  virtual absl::Status RemoveFiles(const std::string& remote_root,
                                   const std::vector<std::string>& paths) = 0;

  // Starts `command` (run by the node's shell, as Run) for a conversation
  // over its stdin and stdout; closing the stream ends its stdin, and the
  // command with it. Apply uses it for the launch agent's apply session
  // (tools/apply/agent_session.h), which spares a program started on the
  // node for every step. Unimplemented (the default) where the transport
  // has none: apply then runs every step as its own command.
  virtual absl::StatusOr<std::unique_ptr<CommandStream>> OpenStream(
      const std::string& command) {
    return absl::UnimplementedError("no command streams on this transport");
  }
};

// Options from apply's command line that a transport may honour.
struct TransportOptions {
  int connect_timeout_s = 10;
  bool accept_new_host_keys = false;
  // Change nothing where the nodes run (`plan --check`, `plan --refresh`):
  // a transport that would create or start a node to reach it refuses
  // instead, with NotFound for a node that apply would create (it holds
  // nothing yet) and Unavailable for one it would start.
  bool read_only = false;
};

// What identifies a connection to a node that the connection holder
// (tools/hold) may keep open between commands, and how long it may stay
// idle there (like OpenSSH's ControlPersist).
struct HoldKey {
  // Equal keys may share one connection: it changes with anything that
  // decides where the connection goes and as whom it logs in (address,
  // port, user, key and its content, known hosts, config).
  std::string identity;
  absl::Duration persist;  // more than zero
};

// A transport plugin: validates its slice of the spec and opens
// connections. One instance per plugin, shared by all threads.
class Transport {
 public:
  virtual ~Transport() = default;

  // Checks what this transport needs of `node` before anything runs.
  // InvalidArgument with the node named when something is missing.
  virtual absl::Status ValidateNode(const ClusterSpec& spec,
                                    const NodeSpec& node) const = 0;

  // Opens a connection to `node`. Unavailable when it cannot be reached,
  // FailedPrecondition when this machine lacks what the transport needs.
  virtual absl::StatusOr<std::unique_ptr<Connection>> Connect(
      const ClusterSpec& spec, const NodeSpec& node,
      const TransportOptions& options) = 0;

  // The key under which the connection holder may keep `node`'s
  // connection; nullopt (the default) where connections are not held
  // (opening one costs nothing worth keeping, or the user chose persist 0).
  virtual std::optional<HoldKey> Holding(const ClusterSpec& spec, const NodeSpec& node,
                                         const TransportOptions& options) const {
    return std::nullopt;
  }

  // True when the transport's nodes see this machine's filesystem (the
  // local transport): a workdir inside the synced source would then be
  // written into the source itself.
  virtual bool SharesLocalFilesystem() const { return false; }

  // True when apply may sync this transport's nodes through the chief's
  // agent (the sync relay: each node fetches its diff from the chief over
  // the nodes' own network). A transport whose nodes may share the workdir
  // (Slurm) or this machine's files (local) keeps its own sync.
  virtual bool RelaysSync() const { return false; }

  // Undoes what apply created for `node` (apply --destroy). Default: nothing.
  virtual absl::Status Destroy(const ClusterSpec& spec, const NodeSpec& node) {
    return absl::OkStatus();
  }

  // Gives this transport's nodes of `spec` the hosts they run on when the
  // transport decides them (a Slurm allocation): renames placeholder nodes
  // and fills in their addresses. With options.read_only it only looks for
  // what an earlier apply obtained and leaves the nodes as they are when
  // there is none. FailedPrecondition when the hosts cannot be had (an
  // unknown partition). Default: the nodes are what the spec says.
  virtual absl::Status ResolveNodes(ClusterSpec& spec, const TransportOptions& options) {
    return absl::OkStatus();
  }

  // Gives back what apply obtained for `spec` (a Slurm allocation) after an
  // apply that failed; the job has stopped. Default: nothing.
  virtual absl::Status Release(const ClusterSpec& spec) { return absl::OkStatus(); }
};

// ResolveNodes of every transport `spec`'s nodes use, each once; the first
// error, naming the transport.
absl::Status ResolveSpecNodes(ClusterSpec& spec, const TransportOptions& options);

// Release of every transport `spec`'s nodes use, each once; the first
// error, naming the transport.
absl::Status ReleaseSpec(const ClusterSpec& spec);

// Name → transport. Plugins register at static initialisation; the spec's
// `transport` key looks them up.
class TransportRegistry {
 public:
  static TransportRegistry& Global();

  // AlreadyExists when `name` is taken.
  absl::Status Register(const std::string& name,
                        std::unique_ptr<Transport> transport);

  // NotFound naming the registered transports and the closest one.
  absl::StatusOr<Transport*> Find(absl::string_view name) const;

  // Registered names, sorted.
  std::vector<std::string> Names() const;

  // Puts `transport` under `name` until the returned object is destroyed,
  // then restores what was there. For tests.
  class ScopedOverride;

 private:
  NamedRegistry<Transport> transports_{"transport"};
};

class TransportRegistry::ScopedOverride {
 public:
  ScopedOverride(const std::string& name, std::unique_ptr<Transport> transport);
  ~ScopedOverride();
  ScopedOverride(const ScopedOverride&) = delete;
  ScopedOverride& operator=(const ScopedOverride&) = delete;

 private:
  std::string name_;
  std::unique_ptr<Transport> previous_;
};

namespace transport_internal {
// Registers at static initialisation; aborts on a duplicate name, which is
// a build mistake.
struct Registerer {
  Registerer(const char* name, std::unique_ptr<Transport> transport);
};
}  // namespace transport_internal

}  // namespace fleetplan

// Registers `Type` (default-constructible) under `name`. Put it in the
// plugin's .cc file; the plugin's cc_library needs alwayslink = True.
#define FLEETPLAN_REGISTER_TRANSPORT(name, Type)                          \
  static ::fleetplan::transport_internal::Registerer                      \
      fleetplan_transport_registerer_##Type(name, std::make_unique<Type>())

#endif  // FLEETPLAN_PLUGINS_TRANSPORT_H_
