// The sync relay, apply's side: the chief is synced directly; its agent
// then serves its tree (`relay-serve`, TLS with the job's key, which
// apply writes to each node through the transport first) while the other
// nodes that lack files fetch their own diff along a chain (RelayParent),
// each from the one before it, which passes on what it receives as it
// receives it (`relay-fetch` with `--port`), over the nodes'
// network, so the changed files cross this machine's link once. A node
// whose parent cannot be reached or breaks off turns to the chief; one that
// cannot reach the chief either gets a direct sync; the step says which.
//
// The chief's own receive is not pipelined into the relay: apply writes it
// through the transport's file channel (PutFiles: tar over ssh, the Docker
// API), which no agent sees; its children would have to poll the chief's
// disk for files that are whole. The chain starts once the chief's tree is
// synced and checked, which also keeps the stale-chief check simple (its
// recorded manifest is the one apply expects).

#include <algorithm>
#include <optional>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tools/apply/parallel_for.h"
#include "tools/apply/sync_steps.h"
#include "tools/plan/node_scripts.h"
#include "tools/protocol/agent_command.h"
#include "tools/protocol/node_layout.h"
#include "tools/protocol/relay_contract.h"
#include "tools/protocol/relay_report.h"
#include "tools/util/digest.h"
#include "tools/util/human_units.h"

namespace fleetplan {
namespace {

// The chief's relay server on `port`, until `receivers` were served or its
// stdin ends.
std::string RelayServeCommand(const NodeSpec& chief, int port, size_t receivers) {
  AgentRelayServe relay;
  relay.root = chief.workdir;
  relay.manifest = SyncManifestPath(chief);
  relay.key_file = JobKeyPath(chief);
  relay.port = port;
  relay.expect = static_cast<int>(receivers);
  return AgentCommandLine(AgentPath(chief), relay);
}

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

bool SyncSteps::UseRelay() const {
  const ApplyOptions& options = context_.options;
  if (!context_.spec.sync.relay || context_.spec.nodes.size() < kRelayMinNodes ||
      options.agent_path.empty() || options.check_only) {
    return false;
  }
  // Only transports that say so (ssh, docker): nodes that see this
  // machine's files have nothing to gain, nodes that may share the workdir
  // (Slurm) would write the same files twice.
  for (const NodeSpec& node : context_.spec.nodes) {
    if (!context_.channels.RelaysSync(node)) return false;
  }
  return true;
}

void SyncSteps::RunAll(const std::vector<const Step*>& steps) {
  const int parallelism = context_.options.parallelism;
  const NodeSpec& chief = context_.spec.chief();
  std::vector<const Step*> first, others;
  for (const Step* step : steps) (step->node == chief.name ? first : others).push_back(step);
  // What was read ahead is for this sync only.
  recorded_ = std::move(read_ahead_);
  read_ahead_.clear();
  struct Forget {
    std::map<std::string, Manifest>& recorded;
    ~Forget() { recorded.clear(); }
  } forget{recorded_};
  if (!UseRelay() || first.empty() || others.empty()) {
    scheduler_.RunAll(steps, parallelism);
    return;
  }
  std::optional<uint64_t> largest = ReadRecordedManifests(steps);
  if (!largest.has_value() || *largest < kRelayMinBytes) {
    scheduler_.RunAll(steps, parallelism);
    return;
  }
  scheduler_.RunAll(first, parallelism);
  if (context_.state.Stopping()) return;
  LinkRelayChain(others);
  struct Unlink {
    std::map<std::string, RelayLink>& links;
    ~Unlink() { links.clear(); }
  } unlink{relay_links_};
  RelayFrom(others);
}

void SyncSteps::RelayFrom(const std::vector<const Step*>& others) {
  const NodeSpec& chief = context_.spec.chief();
  const int port = context_.spec.SupervisorPort();
  // The chief serves until every other node's step has ended (its stdin
  // closes then). Each node may connect twice: for its files, and for the
  // rest of them after its parent broke off. Only connections that prove
  // the job's key count (tools/agent/relay.h).
  if (absl::Status keyed = context_.channels.DeliverJobKey(chief); !keyed.ok()) {
    context_.reporter.OutputLine(chief.name, absl::StrCat("sync: ", keyed.message(),
                                                          "; sending to every node directly"));
    scheduler_.RunAll(others, context_.options.parallelism);
    return;
  }
  CommandSpec serve;
  serve.command = RelayServeCommand(chief, port, 2 * others.size());
  serve.hold_stdin = true;
  absl::Notification others_done, listening, server_ended;
  absl::Mutex served_mu;
  std::string served;
  std::thread server([&] {
    context_.channels.Of(chief.name)
        .Run(serve,
             [&](absl::string_view chunk) {
               absl::MutexLock lock(&served_mu);
               absl::StrAppend(&served, chunk);
               if (!listening.HasBeenNotified() && ParseRelayReport(served).serving.has_value()) {
                 listening.Notify();
               }
             },
             &others_done)
        .IgnoreError();  // a server that could not serve is said below
    server_ended.Notify();
  });
  // The others start once the chief listens; without a server, they are
  // synced directly.
  absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!listening.HasBeenNotified() && !server_ended.HasBeenNotified() &&
         absl::Now() < deadline) {
    listening.WaitForNotificationWithTimeout(absl::Milliseconds(20));
  }
  if (listening.HasBeenNotified()) {
    relay_from_ = PeerTarget(chief, port);
  } else {
    absl::MutexLock lock(&served_mu);
    context_.reporter.OutputLine(chief.name, absl::StrCat("sync: the relay on ", chief.name,
                                                          " did not start (", LastLine(served),
                                                          "); sending to every node directly"));
  }
  // Every node of the chain at once: a parent waits for its child to
  // connect, which a queue behind `parallelism` would hold back. Apply's
  // side of each is one command on an open connection.
  scheduler_.RunAll(others, std::max<int>(context_.options.parallelism, others.size()));
  relay_from_.clear();
  others_done.Notify();
  server.join();
}

void SyncSteps::ReadAhead(const std::string& except) {
  const ApplyOptions& options = context_.options;
  if (options.force || options.check_only || !UseRelay() ||
      FindPhase(context_.plan, PhaseKind::kSync) == nullptr) {
    return;
  }
  std::vector<const NodeSpec*> nodes;
  for (const NodeSpec& node : context_.spec.nodes) {
    if (node.name != except) nodes.push_back(&node);
  }
  std::vector<std::optional<Manifest>> read(nodes.size());
  ParallelFor(nodes.size(), options.parallelism, [&](size_t i) {
    absl::StatusOr<Manifest> recorded =
        ReadRecordedManifest(context_.channels.Of(nodes[i]->name), SyncManifestPath(*nodes[i]));
    if (recorded.ok()) read[i] = *std::move(recorded);
  });
  read_ahead_.clear();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (read[i].has_value()) read_ahead_[nodes[i]->name] = *std::move(read[i]);
  }
}

std::optional<uint64_t> SyncSteps::ReadRecordedManifests(const std::vector<const Step*>& steps) {
  const bool force = context_.options.force;
  std::vector<std::optional<Manifest>> read(steps.size());
  ParallelFor(steps.size(), context_.options.parallelism, [&](size_t i) {
    const NodeSpec* node = context_.FindNode(steps[i]->node);
    if (node == nullptr) return;
    if (auto ahead = recorded_.find(node->name); ahead != recorded_.end()) {
      read[i] = ahead->second;
      return;
    }
    absl::StatusOr<Manifest> recorded =
        force ? Manifest()
              : ReadRecordedManifest(context_.channels.Of(node->name), SyncManifestPath(*node));
    if (recorded.ok()) read[i] = *std::move(recorded);
  });
  uint64_t largest = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!read[i].has_value()) return std::nullopt;
    uint64_t bytes = 0;
    for (const ManifestEntry& entry : DiffManifests(*read[i], manifest_).to_send) {
      bytes += entry.size;
    }
    largest = std::max(largest, bytes);
    recorded_[steps[i]->node] = *std::move(read[i]);
  }
  return largest;
}

void SyncSteps::LinkRelayChain(const std::vector<const Step*>& steps) {
  const bool force = context_.options.force;
  const NodeSpec* chief = &context_.spec.chief();
  // Only the nodes that lack something pass files on: an unchanged node's
  // step ends at once.
  std::vector<const NodeSpec*> chain = {chief};
  for (const Step* step : steps) {
    const NodeSpec* node = context_.FindNode(step->node);
    auto recorded = recorded_.find(step->node);
    if (node == nullptr || recorded == recorded_.end()) continue;
    ManifestDiff diff = DiffManifests(force ? Manifest() : recorded->second, manifest_);
    if (diff.to_send.empty() && diff.to_remove.empty() && !force) continue;
    chain.push_back(node);
  }
  for (size_t position = 1; position < chain.size(); ++position) {
    const NodeSpec* parent = chain[RelayParent(position)];
    relay_links_[chain[position]->name].parent = parent;
    if (parent != chief) ++relay_links_[parent->name].children;
  }
}

std::string SyncSteps::FetchCommand(const Step& step, const NodeSpec& node,
                                    const NodeSpec& parent, const RelayLink& link) const {
  const NodeSpec& chief = context_.spec.chief();
  const int port = context_.spec.SupervisorPort();
  // Its parent in the chain (the chief when it has none), the chief after
  // it, and its own child, served on the supervisor port of this node.
  AgentRelayFetch fetch;
  fetch.key_file = JobKeyPath(node);
  fetch.from = PeerTarget(parent, port);
  fetch.from_node = parent.name;
  if (&parent != &chief) {
    fetch.fallback = relay_from_;
    fetch.fallback_node = chief.name;
  }
  if (link.children > 0) {
    fetch.port = port;
    fetch.expect = link.children;
  }
  fetch.root = node.workdir;
  fetch.manifest = SyncManifestPath(node);
  fetch.expect_digest = DigestHex(SerializeManifest(manifest_));
  fetch.all = context_.options.force;
  // The fetch records the step once the tree checked.
  const std::string record = context_.records.RecordCommand(step, step.hash);
  return absl::StrCat(AgentCommandLine(AgentPath(node), fetch), record.empty() ? "" : " && ",
                      record);
}

StepOutcome SyncSteps::FallBackToDirect(const Step& step, const NodeSpec& node,
                                        uint64_t uplink, const std::string& output) {
  // Preflight would fail this node's reach of the chief later; the files
  // need not wait for that.
  StepOutcome direct = Direct(step, node);
  if (direct.status == StepStatus::kFailed) return direct;
  direct.detail = absl::StrCat(direct.detail, " (sent directly: ", LastLine(output), ")");
  absl::MutexLock lock(&mu_);
  for (SyncTraffic& traffic : traffic_) {
    if (traffic.node == node.name) {
      traffic.via = "direct (relay unreachable)";
      // The agent sent ahead of the fetch is part of what the node got.
      traffic.bytes += uplink;
      traffic.uplink_bytes += uplink;
    }
  }
  return direct;
}

StepOutcome SyncSteps::Relay(const Step& step, const NodeSpec& node) {
  const bool force = context_.options.force;
  Connection& connection = context_.channels.Of(node.name);
  auto recorded = recorded_.find(node.name);
  absl::StatusOr<ManifestDiff> diff =
      recorded != recorded_.end()
          ? DiffManifests(force ? Manifest() : recorded->second, manifest_)
          : DiffWithRecorded(connection, manifest_, SyncManifestPath(node), force);
  if (!diff.ok()) {
    return StepOutcome::Failed(
        absl::StrCat("node '", node.name, "', phase sync: ", diff.status().message()));
  }
  if (diff->to_send.empty() && diff->to_remove.empty() && !force) return StepOutcome::Unchanged();
  uint64_t bytes = 0;
  const ManifestEntry* agent = nullptr;
  for (const ManifestEntry& entry : diff->to_send) {
    bytes += entry.size;
    if (entry.path == BinRelativePath(kAgentFileName)) agent = &entry;
  }
  if (!diff->to_send.empty()) {
    if (StepOutcome workdir = checks_.Workdir(step, node, bytes);
        workdir.status == StepStatus::kFailed) {
      return workdir;
    }
  }
  if (StepOutcome ready = ReadyToFetch(node, agent); ready.status == StepStatus::kFailed) {
    return ready;
  }
  // A direct sync after a failed fetch sends the rest, not the agent again
  // (the tree's check after it still covers the agent).
  if (agent != nullptr && recorded != recorded_.end()) NoteSent(*agent, &recorded->second);
  const uint64_t uplink = agent != nullptr ? agent->size : 0;
  const NodeSpec& chief = context_.spec.chief();
  RelayLink link;
  if (auto it = relay_links_.find(node.name); it != relay_links_.end()) link = it->second;
  const NodeSpec& parent = link.parent != nullptr ? *link.parent : chief;
  std::string output;
  StepOutcome outcome =
      RunStepCommand(context_, step, FetchCommand(step, node, parent, link), &output);
  if (outcome.status == StepStatus::kFailed && outcome.exit_status == kExitRelayUnreachable) {
    return FallBackToDirect(step, node, uplink, output);
  }
  if (outcome.status == StepStatus::kFailed) {
    outcome.failure = absl::StrCat(
        outcome.failure, "\n  (fetching the synced files from '", parent.name, "' at ",
        PeerTarget(parent, context_.spec.SupervisorPort()),
        &parent == &chief ? "" : ", then the chief", ")");
    return outcome;
  }
  outcome.status = StepStatus::kChanged;
  outcome.recorded = context_.records.RecordOf(step, step.hash).has_value();
  SyncResult changes;
  fleetplan::NoteChanges(*diff, &changes);
  NoteSynced(changes);
  Fetched(node, parent, bytes, uplink, output, &outcome);
  return outcome;
}

void SyncSteps::NoteSent(const ManifestEntry& entry, Manifest* recorded) {
  std::vector<ManifestEntry>& entries = recorded->entries;
  auto at = std::lower_bound(
      entries.begin(), entries.end(), entry.path,
      [](const ManifestEntry& e, const std::string& path) { return e.path < path; });
  if (at != entries.end() && at->path == entry.path) {
    *at = entry;
  } else {
    entries.insert(at, entry);
  }
}

StepOutcome SyncSteps::ReadyToFetch(const NodeSpec& node, const ManifestEntry* agent) {
  // The agent that fetches must be there first, and nothing that runs on
  // a node may come from another node: a changed agent comes from this
  // machine through the transport, like the key the relay needs.
  if (agent != nullptr) {
    absl::Status sent = context_.channels.Of(node.name).PutFiles(
        {{agent->local_path, agent->path, agent->mode, agent->size}}, node.workdir);
    if (!sent.ok()) {
      return StepOutcome::Failed(absl::StrCat("node '", node.name, "', phase sync: sending ",
                                              agent->path, ": ", sent.message()));
    }
  }
  if (absl::Status keyed = context_.channels.DeliverJobKey(node); !keyed.ok()) {
    return StepOutcome::Failed(absl::StrCat("phase sync: ", keyed.message()));
  }
  return StepOutcome();
}

void SyncSteps::Fetched(const NodeSpec& node, const NodeSpec& parent, uint64_t bytes,
                        uint64_t uplink, const std::string& output, StepOutcome* outcome) {
  const NodeSpec& chief = context_.spec.chief();
  RelayReport report = ParseRelayReport(output);
  outcome->detail = absl::StrCat(
      report.received.has_value() ? DescribeRelayReceived(*report.received) : LastLine(output),
      "; ", FormatBytes(uplink), " from this machine");
  // The agent said when it gave up on its parent; the step's detail says so too.
  const bool fell_back = !report.fallbacks.empty();
  if (fell_back) absl::StrAppend(&outcome->detail, " (", DescribeRelayFallback(report.fallbacks[0]), ")");
  NoteTraffic({node.name, fell_back ? "relay (fallback to the chief)" : "relay", bytes, uplink,
               absl::Duration(), fell_back ? chief.name : parent.name});
}

}  // namespace fleetplan
