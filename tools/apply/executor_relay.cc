// The sync relay, apply's side: the chief is synced directly; its agent
// then serves its tree (`--relay-serve`) while every other node's agent
// fetches its own diff from it over the nodes' network (`--relay-from`),
// so the changed files cross this machine's link once. A node that cannot
// reach the chief gets a direct sync instead, and the step says so.

#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tools/apply/executor.h"
#include "tools/protocol/node_layout.h"
#include "tools/protocol/relay_contract.h"
#include "tools/sync/sync_tree.h"
#include "tools/util/digest.h"
#include "tools/util/shell_quote.h"

namespace fleetplan {
namespace {

// What other nodes reach `node` by, as HOST:PORT.
std::string PeerTarget(const NodeSpec& node, int port) {
  const std::string& host = node.private_address.empty() ? node.address : node.private_address;
  return absl::StrContains(host, ':') ? absl::StrCat("[", host, "]:", port)
                                      : absl::StrCat(host, ":", port);
}

// The last non-empty line of a command's output.
std::string LastLine(absl::string_view output) {
  output = absl::StripTrailingAsciiWhitespace(output);
  size_t newline = output.rfind('\n');
  return std::string(newline == absl::string_view::npos ? output : output.substr(newline + 1));
}

}  // namespace

bool Executor::UseRelay() const {
  if (!spec_.sync.relay || spec_.nodes.size() < kRelayMinNodes || options_.agent_path.empty() ||
      options_.check_only) {
    return false;
  }
  // Nodes that see this machine's files have nothing to gain.
  for (const NodeSpec& node : spec_.nodes) {
    absl::StatusOr<Transport*> transport = TransportRegistry::Global().Find(node.transport);
    if (!transport.ok() || (*transport)->SharesLocalFilesystem()) return false;
  }
  return true;
}

void Executor::RunSyncSteps(const std::vector<const Step*>& steps) {
  const NodeSpec& chief = spec_.chief();
  std::vector<const Step*> first, others;
  for (const Step* step : steps) (step->node == chief.name ? first : others).push_back(step);
  if (!UseRelay() || first.empty() || others.empty()) {
    RunSteps(steps, options_.parallelism);
    return;
  }
  RunSteps(first, options_.parallelism);
  if (Stopping()) return;
  // The chief serves until every other node's step has ended (its stdin
  // closes then), or until each has fetched.
  CommandSpec serve;
  serve.command = absl::StrCat(ShellQuote(AgentPath(chief)), " --relay-serve=",
                               ShellQuote(chief.workdir), " --manifest=",
                               ShellQuote(SyncManifestPath(chief)),
                               " --relay-port=", spec_.SupervisorPort(),
                               " --relay-expect=", others.size());
  serve.hold_stdin = true;
  absl::Notification others_done;
  std::string served;
  std::thread server([&] {
    connections_.at(chief.name)
        ->Run(serve, [&served](absl::string_view chunk) { absl::StrAppend(&served, chunk); },
              &others_done)
        .IgnoreError();  // a server that could not serve shows as unreachable
  });
  relay_from_ = PeerTarget(chief, spec_.SupervisorPort());
  RunSteps(others, options_.parallelism);
  relay_from_.clear();
  others_done.Notify();
  server.join();
}

Executor::Outcome Executor::RelayNode(const Step& step, const NodeSpec& node) {
  Connection& connection = *connections_.at(node.name);
  absl::StatusOr<ManifestDiff> diff =
      DiffWithRecorded(connection, sync_manifest_, SyncManifestPath(node), options_.force);
  if (!diff.ok()) {
    return Outcome::Failed(
        absl::StrCat("node '", node.name, "', phase sync: ", diff.status().message()));
  }
  Outcome outcome;
  if (diff->to_send.empty() && diff->to_remove.empty() && !options_.force) {
    outcome.status = StepStatus::kUnchanged;
    return outcome;
  }
  uint64_t bytes = 0;
  const ManifestEntry* agent = nullptr;
  for (const ManifestEntry& entry : diff->to_send) {
    bytes += entry.size;
    if (entry.path == BinRelativePath(kAgentFileName)) agent = &entry;
  }
  if (!diff->to_send.empty()) {
    if (Outcome workdir = CheckWorkdir(step, node, bytes); workdir.status == StepStatus::kFailed) {
      return workdir;
    }
  }
  // The agent that fetches must be there first: it alone crosses this
  // machine's link for every node (only when it changed).
  uint64_t uplink = 0;
  if (agent != nullptr) {
    absl::Status sent = connection.PutFiles(
        {{agent->local_path, agent->path, agent->mode, agent->size}}, node.workdir);
    if (!sent.ok()) {
      return Outcome::Failed(absl::StrCat("node '", node.name, "', phase sync: sending ",
                                          agent->path, ": ", sent.message()));
    }
    uplink = agent->size;
  }
  const NodeSpec& chief = spec_.chief();
  std::string command = absl::StrCat(
      ShellQuote(AgentPath(node)), " --relay-from=", ShellQuote(relay_from_),
      " --relay-from-node=", ShellQuote(chief.name), " --relay-root=", ShellQuote(node.workdir),
      " --manifest=", ShellQuote(SyncManifestPath(node)),
      " --relay-expect-digest=", DigestHex(SerializeManifest(sync_manifest_)),
      options_.force ? " --relay-all" : "");
  std::string output;
  outcome = RunCommand(step, command, &output);
  if (outcome.status == StepStatus::kFailed && outcome.exit_status == kExitRelayUnreachable) {
    // Preflight would fail this node's reach of the chief later; the files
    // need not wait for that.
    Outcome direct = SyncDirect(step, node);
    if (direct.status != StepStatus::kFailed) {
      direct.detail = absl::StrCat(direct.detail, " (sent directly: ", LastLine(output), ")");
      absl::MutexLock lock(&mu_);
      for (SyncTraffic& traffic : sync_traffic_) {
        if (traffic.node == node.name) {
          traffic.via = "direct (relay unreachable)";
          traffic.uplink_bytes += uplink;
        }
      }
    }
    return direct;
  }
  if (outcome.status == StepStatus::kFailed) {
    outcome.failure = absl::StrCat(outcome.failure, "\n  (fetching the synced files from the chief '",
                                   chief.name, "' at ", relay_from_, ")");
    return outcome;
  }
  outcome.status = StepStatus::kChanged;
  outcome.detail = absl::StrCat(LastLine(output), "; ", FormatBytes(uplink), " from this machine");
  NoteSyncTraffic({node.name, "relay", bytes, uplink});
  return outcome;
}

void Executor::NoteSyncTraffic(SyncTraffic traffic) {
  absl::MutexLock lock(&mu_);
  sync_traffic_.push_back(std::move(traffic));
}

}  // namespace fleetplan
