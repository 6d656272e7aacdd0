#include "plugins/slurm/slurm_transport.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "plugins/slurm/slurm_commands.h"
#include "plugins/slurm/slurm_connection.h"
#include "plugins/slurm/slurm_settings.h"
#include "plugins/slurm/state_here.h"
#include "tools/process/subprocess.h"
#include "tools/protocol/node_layout.h"
#include "tools/util/shell_quote.h"

namespace fleetplan {
namespace {

constexpr char kName[] = "slurm";
// How long apply waits for the allocation to be granted (the job to run).
constexpr absl::Duration kAllocationWait = absl::Minutes(30);

std::vector<NodeSpec*> SlurmNodes(ClusterSpec& spec) {
  std::vector<NodeSpec*> nodes;
  for (NodeSpec& node : spec.nodes) {
    if (node.transport == kName) nodes.push_back(&node);
  }
  return nodes;
}

// The hosts of the spec's Slurm nodes, one launch agent each (the spec
// refuses two nodes with one address).
size_t SlurmHostCount(const ClusterSpec& spec) {
  std::set<std::string> hosts;
  for (const NodeSpec& node : spec.nodes) {
    if (node.transport == kName) hosts.insert(node.address);
  }
  return hosts.size();
}

// Whether `root` is one filesystem for every host: a marker written from
// the first host, read from all of them in one step.
absl::StatusOr<bool> ProbeShared(const Allocation& allocation, const std::string& root) {
  std::string marker = absl::StrCat(root, "/.fleetplan-shared-", allocation.job_id);
  std::string token = absl::StrCat(allocation.job_id, "-", absl::ToUnixNanos(absl::Now()));
  SlurmConnection first(allocation.job_id, allocation.hosts[0], nullptr);
  absl::Status written = first.WriteFile(marker, token, 0644);
  if (!written.ok()) return written;
  SubprocessOptions options;
  options.argv = EveryNodeArgv(allocation.job_id, allocation.hosts,
                               absl::StrCat("cat ", ShellQuote(marker), " 2>/dev/null; echo"));
  absl::StatusOr<Completed> seen = RunToCompletion(options, absl::Seconds(60));
  std::string output;
  first.RunWithInput(absl::StrCat("rm -f ", ShellQuote(marker)), "", &output).IgnoreError();
  if (!seen.ok()) return seen.status();
  size_t found = 0;
  for (const std::string& line : OutputLines(seen->output)) {
    if (absl::EndsWith(line, absl::StrCat(": ", token))) ++found;
  }
  return found == allocation.hosts.size();
}

// The state folder of each of the spec's hosts in the allocation.
std::map<std::string, std::string> StateFolders(const ClusterSpec& spec,
                                                const Allocation& allocation) {
  std::map<std::string, std::string> folders;
  for (const NodeSpec& node : spec.nodes) {
    if (node.transport != kName ||
        std::find(allocation.hosts.begin(), allocation.hosts.end(), node.address) ==
            allocation.hosts.end() ||
        folders.count(node.address) != 0) {
      continue;
    }
    folders[node.address] = NodeStateDir(node);
  }
  return folders;
}

// Every node's state folder, read in one job step over the spec's hosts
// (see state_snapshot.h): what each node's connection answers reads from.
// Where the state step (state_step.h) could not start.
std::map<std::string, StateSnapshot> SnapshotEveryNode(
    const Allocation& allocation, const std::map<std::string, std::string>& folders) {
  std::vector<std::string> hosts;
  for (const auto& [host, folder] : folders) hosts.push_back(host);
  if (hosts.empty()) return {};
  SubprocessOptions options;
  options.argv = EveryNodeArgv(allocation.job_id, hosts, EveryHostSnapshotCommand(folders));
  absl::StatusOr<Completed> read = RunToCompletion(options, absl::Seconds(60));
  if (!read.ok() || read->status != 0) return {};
  return ParseEveryHostSnapshot(folders, read->output);
}

// Every node's state folder as this machine sees it, where it sees all of
// them (state_here.h); nullopt otherwise.
std::optional<std::map<std::string, StateSnapshot>> ReadEveryNodeHere(
    const std::map<std::string, std::string>& folders, const std::string& job_id) {
  if (folders.empty()) return std::nullopt;
  std::map<std::string, StateSnapshot> snapshots;
  for (const auto& [host, folder] : folders) {
    absl::StatusOr<StateSnapshot> read = ReadStateFolderHere(folder, job_id);
    if (!read.ok()) return std::nullopt;
    snapshots[host] = *std::move(read);
  }
  return snapshots;
}

// The first Connect's read of every node: here, where this machine sees
// their folders (`*here` says so); else the state step, which the chief's
// connection keeps for its brief commands; else a step that ends.
std::map<std::string, StateSnapshot> ReadEveryNode(const ClusterSpec& spec,
                                                   const Allocation& allocation,
                                                   std::unique_ptr<StateStep>* state_step,
                                                   bool* here) {
  std::map<std::string, std::string> folders = StateFolders(spec, allocation);
  if (std::optional<std::map<std::string, StateSnapshot>> seen =
          ReadEveryNodeHere(folders, allocation.job_id)) {
    *here = true;
    return *std::move(seen);
  }
  const std::string& chief = spec.chief().address;
  if (folders.count(chief) != 0) {
    absl::StatusOr<std::unique_ptr<StateStep>> step =
        StateStep::Start(allocation.job_id, folders, chief, absl::Seconds(60));
    if (step.ok()) {
      *state_step = *std::move(step);
      return (*state_step)->TakeOtherSnapshots();
    }
  }
  return SnapshotEveryNode(allocation, folders);
}

}  // namespace

absl::Status SlurmTransport::ValidateNode(const ClusterSpec& spec, const NodeSpec& node) const {
  if (!absl::StartsWith(node.workdir, "/")) {
    return absl::InvalidArgumentError(absl::StrCat("node \"", node.name, "\": workdir \"",
                                                   node.workdir, "\" must be an absolute path"));
  }
  return absl::OkStatus();
}

SlurmTransport::Known* SlurmTransport::Remember(const ClusterSpec& spec,
                                                Allocation allocation) {
  auto known = std::make_unique<Known>();
  known->allocation = std::move(allocation);
  const Allocation* held = &known->allocation;
  known->shared = std::make_unique<SharedWorkdir>(
      [held](const std::string& root) { return ProbeShared(*held, root); });
  known->agents = std::make_unique<AgentStep>(held, static_cast<int>(SlurmHostCount(spec)));
  Known* raw = known.get();
  known_[AllocationJobName(spec)] = std::move(known);
  return raw;
}

absl::StatusOr<SlurmTransport::Known*> SlurmTransport::Find(const ClusterSpec& spec) {
  std::string job_name = AllocationJobName(spec);
  auto it = known_.find(job_name);
  if (it != known_.end()) return it->second.get();
  absl::StatusOr<std::optional<Allocation>> found = FindAllocation(job_name);
  if (!found.ok()) return found.status();
  if (!found->has_value()) return nullptr;
  return Remember(spec, **std::move(found));
}

absl::Status SlurmTransport::ResolveNodes(ClusterSpec& spec, const TransportOptions& options) {
  std::vector<NodeSpec*> nodes = SlurmNodes(spec);
  if (nodes.empty()) return absl::OkStatus();
  const SlurmSettings& settings = SlurmSettingsOf(spec);
  const bool placeholders = settings.nodes > 0;
  std::vector<std::string> named;
  if (!placeholders) {
    for (const NodeSpec* node : nodes) named.push_back(node->address);
  }
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Known*> known = Find(spec);
  if (!known.ok()) return known.status();
  if (*known == nullptr) {
    // What sinfo says the partition can give, before asking for it (also
    // `plan --check`'s answer when there is no allocation yet).
    if (absl::Status can = CheckCanAllocate(settings, static_cast<int>(nodes.size()));
        !can.ok()) {
      return can;
    }
    if (options.read_only) return absl::OkStatus();
    absl::StatusOr<Allocation> allocation = Allocate(
        settings, AllocationJobName(spec), static_cast<int>(nodes.size()), named, kAllocationWait);
    if (!allocation.ok()) return allocation.status();
    known = Remember(spec, *std::move(allocation));
  }
  const Allocation& allocation = (*known)->allocation;
  if (allocation.hosts.size() < nodes.size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", allocation.job_id, " has ", allocation.hosts.size(), " hosts (",
        absl::StrJoin(allocation.hosts, ", "), "); the spec has ", nodes.size(),
        " nodes (apply --destroy releases the allocation, the next apply asks for one "
        "that fits)"));
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeSpec& node = *nodes[i];
    if (!placeholders) {
      if (std::find(allocation.hosts.begin(), allocation.hosts.end(), node.address) ==
          allocation.hosts.end()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "node \"", node.name, "\" is not a host of job ", allocation.job_id, " (",
            absl::StrJoin(allocation.hosts, ", "),
            "; apply --destroy releases the allocation, the next apply asks for these nodes)"));
      }
      continue;
    }
    node.name = node.address = node.private_address = allocation.hosts[i];
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Connection>> SlurmTransport::Connect(
    const ClusterSpec& spec, const NodeSpec& node, const TransportOptions& options) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Known*> known = Find(spec);
  if (!known.ok()) return known.status();
  if (*known == nullptr) {
    return absl::NotFoundError(absl::StrCat("no Slurm allocation named ",
                                            AllocationJobName(spec),
                                            " yet (apply obtains it)"));
  }
  const Allocation& allocation = (*known)->allocation;
  if (std::find(allocation.hosts.begin(), allocation.hosts.end(), node.address) ==
      allocation.hosts.end()) {
    return absl::NotFoundError(absl::StrCat("node \"", node.name, "\" is not a host of job ",
                                            allocation.job_id, " (",
                                            absl::StrJoin(allocation.hosts, ", "), ")"));
  }
  if (!(*known)->snapshotted) {
    (*known)->snapshots =
        ReadEveryNode(spec, allocation, &(*known)->state_step, &(*known)->state_here);
    (*known)->snapshotted = true;
  }
  std::optional<StateSnapshot> snapshot;
  auto taken = (*known)->snapshots.find(node.address);
  if (taken != (*known)->snapshots.end() && taken->second.folder() == NodeStateDir(node)) {
    snapshot = std::move(taken->second);
    (*known)->snapshots.erase(taken);
  }
  auto connection = std::make_unique<SlurmConnection>(
      allocation.job_id, node.address, (*known)->shared.get(), std::move(snapshot),
      (*known)->agents.get(), AgentPath(node));
  if ((*known)->state_here) connection->SeeStateHere();
  if (node.address == spec.chief().address && (*known)->state_step != nullptr) {
    connection->KeepStateStep(std::move((*known)->state_step));
  }
  return connection;
}

absl::Status SlurmTransport::Release(const ClusterSpec& spec) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Known*> known = Find(spec);
  if (!known.ok()) return known.status();
  if (*known == nullptr) return absl::OkStatus();
  absl::Status cancelled = CancelAllocation((*known)->allocation);
  if (cancelled.ok()) known_.erase(AllocationJobName(spec));
  return cancelled;
}

FLEETPLAN_REGISTER_TRANSPORT(kName, SlurmTransport);

}  // namespace fleetplan
