#include "tools/apply/executor.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "tools/apply/agent_session.h"
#include "tools/apply/authorize_key.h"
#include "tools/apply/connect_nodes.h"
#include "tools/apply/local_build.h"
#include "tools/apply/output_buffer.h"
#include "tools/apply/parallel_for.h"
#include "tools/plan/node_scripts.h"
#include "tools/plan/preflight_script.h"
#include "tools/process/files.h"
#include "tools/protocol/node_layout.h"
#include "tools/sync/sync_tree.h"
#include "tools/plan/forecast.h"
#include "tools/util/digest.h"
#include "tools/util/path_policy.h"
#include "tools/util/shell_quote.h"
#include "tools/util/timed_cancel.h"

namespace fleetplan {
namespace {

std::string Indent(absl::string_view text) {
  return absl::StrCat("    ", absl::StrReplaceAll(text, {{"\n", "\n    "}}));
}

std::vector<std::string> NodeNames(const ClusterSpec& spec) {
  std::vector<std::string> names;
  for (const NodeSpec& node : spec.nodes) names.push_back(node.name);
  return names;
}

}  // namespace

Executor::Executor(const ClusterSpec& spec, const Plan& plan, const Manifest& source,
                   ApplyOptions options, ProgressReporter& reporter)
    : spec_(spec), plan_(plan), source_(source), options_(std::move(options)),
      reporter_(reporter), checks_(NodeNames(spec)) {
  cancels_[std::string(kControllerNode)] = std::make_unique<absl::Notification>();
  for (const NodeSpec& node : spec_.nodes) {
    cancels_[node.name] = std::make_unique<absl::Notification>();
  }
}

Executor::~Executor() = default;

ApplyResult Executor::Run() {
  // `plan --check` skips what is not there yet; apply needs every node.
  absl::Status opened = ConnectNodes(/*tolerate_not_there=*/options_.check_only);
  if (!opened.ok()) return {kExitApplyFailed, std::string(opened.message())};
  // Before anything is read: what another apply is writing is no state.
  if (!options_.check_only) {
    if (std::optional<ApplyResult> locked = LockState(); locked.has_value()) return *locked;
  }
  absl::Cleanup unlock = [this] { UnlockState(); };
  {
    // What an earlier Run found is not this one's.
    absl::MutexLock lock(&mu_);
    anything_changed_ = false;
    checked_inputs_changed_ = false;
    built_.clear();
    checks_ = PreflightReport(NodeNames(spec_));
    checks_reported_ = false;
  }
  ended_job_.reset();
  if (!options_.check_only) {
    // The other nodes' manifests are read meanwhile (a sync may relay);
    // only the chief's connection is used here until they are.
    prefetched_.clear();
    std::thread prefetch([this] { PrefetchRecordedManifests(spec_.chief().name); });
    std::optional<NodeJobState> job = FindPhase(plan_, PhaseKind::kLaunch) != nullptr
                                          ? ReadChiefJobState()
                                          : std::nullopt;
    prefetch.join();
    PrefetchStepRecords();
    if (std::optional<ApplyResult> running = CheckRunningJob(job); running.has_value()) {
      return *running;
    }
  }
  ApplyResult last;
  for (const Phase& phase : plan_.phases) {
    ApplyResult result = phase.kind == PhaseKind::kLaunch      ? RunLaunch(phase)
                         : phase.kind == PhaseKind::kPreflight ? RunPreflight(phase)
                                                               : RunPhase(phase);
    bool interrupted;
    {
      absl::MutexLock lock(&mu_);
      interrupted = interrupted_;
    }
    if (interrupted && result.exit_code != kExitInterrupted) {
      result = {kExitInterrupted, "interrupted"};
    }
    if (result.exit_code != 0) {
      // Checks that ran before apply stopped (the workdir's, before a sync).
      ReportChecks();
      return result;
    }
    last = result;
  }
  return last;
}

void Executor::Interrupt() {
  {
    absl::MutexLock lock(&mu_);
    interrupted_ = true;
  }
  CancelAll();
}

void Executor::CancelAll() {
  // Notify() twice is fatal, and the launch phase and Interrupt() may race.
  static absl::Mutex cancel_mu(absl::kConstInit);
  absl::MutexLock lock(&cancel_mu);
  for (auto& [node, cancel] : cancels_) {
    if (!cancel->HasBeenNotified()) cancel->Notify();
  }
}

absl::Status Executor::ConnectNodes(bool tolerate_not_there) {
  // Connected already: every node has its connection, or (where tolerated)
  // is known not to be there yet.
  const size_t known = connections_.size() + (tolerate_not_there ? not_there_.size() : 0);
  if (known == spec_.nodes.size()) return absl::OkStatus();
  connections_.clear();
  not_there_.clear();
  sessions_.clear();
  // plan --check and --refresh change nothing; an agent shipped by nothing
  // (tests without one) is not asked for.
  bool sessions = !options_.agent_path.empty() && !options_.check_only &&
                  !options_.transport.read_only;
  absl::Mutex sessions_mu;
  // Each node's session opens as soon as the node is connected.
  AfterConnect open_session = [&](const NodeSpec& node, std::unique_ptr<Connection> connection) {
    // Where the node has no agent that speaks it (the first apply ships
    // one; an upgrade ships a new one) or the transport has no streams,
    // every step runs as its own command, as before.
    absl::StatusOr<std::unique_ptr<AgentSessionConnection>> session =
        AgentSessionConnection::Open(connection, node.name, AgentPath(node),
                                     absl::Seconds(options_.transport.connect_timeout_s));
    if (!session.ok()) return connection;
    absl::MutexLock lock(&sessions_mu);
    sessions_[node.name] = session->get();
    return std::unique_ptr<Connection>(*std::move(session));
  };
  absl::StatusOr<NodeConnections> opened =
      fleetplan::ConnectNodes(spec_, options_.transport, options_.parallelism,
                              tolerate_not_there, sessions ? open_session : nullptr);
  if (!opened.ok()) {
    sessions_.clear();
    return opened.status();
  }
  connections_ = std::move(opened->open);
  not_there_ = std::move(opened->not_there);
  return absl::OkStatus();
}

AgentSessionConnection* Executor::SessionOf(const std::string& node) const {
  auto it = sessions_.find(node);
  return it == sessions_.end() ? nullptr : it->second;
}

std::vector<std::string> Executor::NodesNotThereYet() const {
  std::vector<std::string> names;
  for (const NodeSpec& node : spec_.nodes) {
    if (not_there_.count(node.name) != 0) names.push_back(node.name);
  }
  return names;
}

ApplyResult Executor::RunPhase(const Phase& phase) {
  std::vector<const Step*> first, rest;
  std::vector<Step> synthesized;
  if (phase.kind == PhaseKind::kSync) {
    std::vector<ExtraFile> extras;
    {
      absl::MutexLock lock(&mu_);
      extras = built_;
    }
    if (!options_.agent_path.empty()) {
      extras.push_back({options_.agent_path, BinRelativePath(kAgentFileName)});
    }
    sync_manifest_ = source_;
    absl::Status added = AddExtraFiles(extras, &sync_manifest_);
    if (!added.ok()) {
      return {kExitApplyFailed, absl::StrCat("sync: ", added.message())};
    }
    // Without [sync] the plan has no sync steps, but the agent and the built
    // program must still reach every node.
    if (phase.steps.empty() && !sync_manifest_.entries.empty()) {
      for (const NodeSpec& node : spec_.nodes) {
        Step& step = synthesized.emplace_back();
        step.phase = PhaseKind::kSync;
        step.node = node.name;
        step.kind = StepKind::kSyncTree;
      }
    }
  }
  for (const Step& step : phase.steps) {
    // authorize-key needs the key that ensure-key prints.
    (step.kind == StepKind::kEnsureKey ? first : rest).push_back(&step);
  }
  for (const Step& step : synthesized) rest.push_back(&step);
  RunSteps(first, options_.parallelism);
  if (!Stopping()) {
    if (phase.kind == PhaseKind::kSync) {
      absl::Time start = absl::Now();
      RunSyncSteps(rest);
      std::vector<SyncTraffic> traffic;
      {
        absl::MutexLock lock(&mu_);
        traffic.swap(sync_traffic_);
      }
      if (!traffic.empty()) reporter_.SyncReported(traffic, absl::Now() - start);
    } else {
      RunSteps(rest, options_.parallelism);
    }
  }
  absl::MutexLock lock(&mu_);
  if (failed_) return {kExitApplyFailed, failure_};
  return {};
}

void Executor::RunSteps(const std::vector<const Step*>& steps, int threads) {
  ParallelFor(
      steps.size(), threads, [&](size_t i) { RunOneStep(*steps[i]); },
      [this] { return !Stopping(); });
}

void Executor::RunOneStep(const Step& step, const absl::Notification* serving_done) {
  reporter_.StepStarted(step);
  absl::Time start = absl::Now();
  Outcome outcome = Execute(step, serving_done);
  if (outcome.status == StepStatus::kFailed && CancelFor(step.node)->HasBeenNotified()) {
    outcome.status = StepStatus::kCancelled;
  }
  reporter_.StepFinished(step, outcome.status, absl::Now() - start,
                         outcome.status == StepStatus::kFailed ? "" : outcome.detail);
  if (outcome.status == StepStatus::kChanged) {
    absl::MutexLock lock(&mu_);
    anything_changed_ = true;
    // A sync says itself what it changed (NoteSyncChanges).
    if (step.kind != StepKind::kSyncTree) checked_inputs_changed_ = true;
  }
  if (outcome.status == StepStatus::kFailed && outcome.stops_phase) {
    NoteFailure(outcome.failure);
  }
}

void Executor::NoteFailure(std::string message) {
  absl::MutexLock lock(&mu_);
  if (failed_) return;  // the first failure is the one to report
  failed_ = true;
  failure_ = std::move(message);
}

bool Executor::Stopping() const {
  absl::MutexLock lock(&mu_);
  return failed_ || interrupted_;
}

const NodeSpec* Executor::FindNode(const std::string& name) const {
  for (const NodeSpec& node : spec_.nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

const std::string& Executor::PhasePreamble(PhaseKind kind) const {
  if (const Phase* phase = FindPhase(plan_, kind); phase != nullptr) return phase->preamble;
  static const std::string* kNone = new std::string();
  return *kNone;
}

const absl::Notification* Executor::CancelFor(const std::string& node) const {
  auto it = cancels_.find(node);
  return it == cancels_.end() ? cancels_.at(std::string(kControllerNode)).get()
                              : it->second.get();
}

Executor::Outcome Executor::Execute(const Step& step,
                                    const absl::Notification* serving_done) {
  if (step.kind == StepKind::kBazelBuild) return Build(step);
  if (FindNode(step.node) == nullptr) {
    return Outcome::Failed(absl::StrCat("phase ", PhaseName(step.phase),
                                        ": the plan names node '", step.node,
                                        "', which the spec does not list"));
  }
  switch (step.kind) {
    case StepKind::kBazelBuild:
      return Build(step);  // not reached: it runs on the controller, above
    case StepKind::kEnsureKey:
      return EnsureKey(step);
    case StepKind::kAuthorizeKey:
      return AuthorizeKey(step);
    case StepKind::kSyncTree:
      return SyncNode(step);
    case StepKind::kWriteEnv:
      return WriteEnv(step);
    case StepKind::kCheck:
      return RunChecks(step, absl::StrCat(PhasePreamble(step.phase), step.command),
                       serving_done);
    case StepKind::kLaunchAgent: {
      // Starts the node's agent detached, and returns once its ranks run.
      if (absl::Status keyed = job_key_.EnsureOn(*connections_.at(step.node), *FindNode(step.node));
          !keyed.ok()) {
        return Outcome::Failed(absl::StrCat("phase launch: ", keyed.message()));
      }
      std::string output;
      return RunCommand(step, step.command, &output, nullptr, {{"FLEETPLAN_RUN_ID", run_id_}});
    }
  }
  return Outcome::Failed(absl::StrCat("node '", step.node, "', phase ",
                                      PhaseName(step.phase), ": unknown step kind '",
                                      StepKindName(step.kind), "'"));
}

// Skipped when the node recorded this hash after the last success.
Executor::Outcome Executor::Skippable(const Step& step, const std::string& hash) {
  Outcome outcome;
  if (options_.force || options_.check_only || hash.empty()) return outcome;
  if (std::optional<std::string> known = KnownRecord(step); known.has_value()) {
    if (*known == hash) outcome.status = StepStatus::kUnchanged;
    return outcome;
  }
  absl::StatusOr<std::string> recorded = connections_.at(step.node)->ReadFile(
      StepRecordPath(*FindNode(step.node), PhaseName(step.phase)));
  if (recorded.ok() && absl::StripAsciiWhitespace(*recorded) == hash) {
    outcome.status = StepStatus::kUnchanged;
  }
  return outcome;
}

bool Executor::AllRecorded(const Phase& phase) {
  // Every node at once: a round trip each.
  std::vector<char> recorded(phase.steps.size(), 0);
  ParallelFor(phase.steps.size(), options_.parallelism, [&](size_t i) {
    const Step& step = phase.steps[i];
    recorded[i] = FindNode(step.node) != nullptr &&
                  Skippable(step, step.hash).status == StepStatus::kUnchanged;
  });
  return std::all_of(recorded.begin(), recorded.end(), [](char r) { return r != 0; });
}

void Executor::ReportUnchanged(const Phase& phase) {
  for (const Step& step : phase.steps) {
    reporter_.StepStarted(step);
    reporter_.StepFinished(step, StepStatus::kUnchanged, absl::ZeroDuration(), "");
  }
}

std::string Executor::RecordCommand(const Step& step, const std::string& hash) const {
  if (hash.empty() || options_.check_only) return "";
  std::string path = StepRecordPath(*FindNode(step.node), PhaseName(step.phase));
  std::string temporary = absl::StrCat(path, ".tmp");
  return absl::StrCat("umask 077 && mkdir -p ", ShellQuote(Dirname(path)),
                      " && printf '%s\\n' ", ShellQuote(hash), " >", ShellQuote(temporary),
                      " && mv -f ", ShellQuote(temporary), " ", ShellQuote(path));
}

absl::Status Executor::Record(const Step& step, const std::string& hash) {
  if (hash.empty() || options_.check_only) return absl::OkStatus();
  absl::Status written = connections_.at(step.node)->WriteFile(
      StepRecordPath(*FindNode(step.node), PhaseName(step.phase)), absl::StrCat(hash, "\n"),
      0600);
  // A failed write may have left either: ask the node next time.
  if (written.ok()) {
    NoteRecord(step, hash);
  } else {
    ForgetRecord(step);
  }
  return written;
}

ApplyResult Executor::RecordPhase(const Phase& phase) {
  // Every node at once: a round trip each.
  std::vector<absl::Status> recorded(phase.steps.size());
  ParallelFor(phase.steps.size(), options_.parallelism,
              [&](size_t i) { recorded[i] = Record(phase.steps[i], phase.steps[i].hash); });
  for (size_t i = 0; i < phase.steps.size(); ++i) {
    if (!recorded[i].ok()) {
      return {kExitApplyFailed,
              absl::StrCat("node '", phase.steps[i].node, "': ", recorded[i].message())};
    }
  }
  return {};
}

void Executor::NoteSyncChanges(const SyncResult& changes) {
  // The program as the launch finds it under the workdir ("./train.sh").
  std::string program = spec_.job.program;
  while (absl::StartsWith(program, "./")) program.erase(0, 2);
  bool checked = changes.extras_changed;
  for (const std::string& path : changes.changed_paths) checked |= path == program;
  absl::MutexLock lock(&mu_);
  checked_inputs_changed_ |= checked;
}

Executor::Outcome Executor::Build(const Step& step) {
  std::string label;
  for (const auto& [key, value] : step.inputs) {
    if (key == "targets") label = value;
  }
  std::string before;
  if (absl::StatusOr<std::string> path = BuiltBinaryPath(options_.workspace, label);
      path.ok()) {
    absl::StatusOr<std::string> content = ReadFileToString(*path);
    if (content.ok()) before = DigestHex(*content);
  }
  std::string output;
  Outcome outcome = RunCommand(step, step.command, &output);
  if (outcome.status == StepStatus::kFailed) return outcome;
  absl::StatusOr<std::string> path = BuiltBinaryPath(options_.workspace, label);
  if (!path.ok()) return Outcome::Failed(absl::StrCat("build: ", path.status().message()));
  absl::StatusOr<std::string> content = ReadFileToString(*path);
  if (!content.ok()) {
    return Outcome::Failed(absl::StrCat("build: ", content.status().message()));
  }
  if (DigestHex(*content) == before) outcome.status = StepStatus::kUnchanged;
  outcome.detail = *path;
  absl::MutexLock lock(&mu_);
  built_.push_back({*path, BinRelativePath(LabelTargetName(label))});
  return outcome;
}

Executor::Outcome Executor::EnsureKey(const Step& step) {
  // Always runs: it only creates a key when missing, and the other nodes
  // need the key it prints.
  Outcome skip = Skippable(step, step.hash);
  std::string output;
  Outcome outcome = RunCommand(step, step.command, &output);
  if (outcome.status == StepStatus::kFailed) return outcome;
  std::optional<std::string> key = PublicKeyFromOutput(output);
  if (!key.has_value()) {
    return Outcome::Failed(absl::StrCat("node '", step.node,
                                        "', phase keys: ensure-key printed no public key"));
  }
  {
    absl::MutexLock lock(&mu_);
    chief_key_ = *key;
  }
  if (absl::Status recorded = Record(step, step.hash); !recorded.ok()) {
    return Outcome::Failed(absl::StrCat("node '", step.node, "': ", recorded.message()));
  }
  outcome.status = skip.status;
  return outcome;
}

Executor::Outcome Executor::AuthorizeKey(const Step& step) {
  std::string key;
  {
    absl::MutexLock lock(&mu_);
    key = chief_key_;
  }
  if (key.empty()) {
    return Outcome::Failed(absl::StrCat("node '", step.node,
                                        "', phase keys: the chief's key is unknown "
                                        "(no ensure-key step ran)"));
  }
  // The recorded hash covers the key too: a new chief key is authorized.
  std::string hash = Digester().Add(step.hash).Add(key).Hex();
  if (Outcome skip = Skippable(step, hash); skip.status == StepStatus::kUnchanged) {
    return skip;
  }
  std::string output;
  Outcome outcome = RunCommand(step, AuthorizeKeyCommand(key), &output);
  if (outcome.status == StepStatus::kFailed) return outcome;
  if (absl::Status recorded = Record(step, hash); !recorded.ok()) {
    return Outcome::Failed(absl::StrCat("node '", step.node, "': ", recorded.message()));
  }
  return outcome;
}

Executor::Outcome Executor::SyncNode(const Step& step) {
  // SyncTree is incremental by itself, and built binaries are not in the
  // step's hash, so it always runs.
  // (ValidateNodes has refused a workdir inside the source already.)
  const NodeSpec& node = *FindNode(step.node);
  absl::Time start = absl::Now();
  bool relayed = !relay_from_.empty() && node.name != spec_.chief().name;
  Outcome outcome = relayed ? RelayNode(step, node) : SyncDirect(step, node);
  if (outcome.status == StepStatus::kFailed) return outcome;
  if (absl::Status recorded = outcome.recorded ? absl::OkStatus() : Record(step, step.hash);
      !recorded.ok()) {
    return Outcome::Failed(absl::StrCat("node '", node.name, "': ", recorded.message()));
  }
  if (outcome.status == StepStatus::kChanged) {
    // The outcome's traffic; the node's elapsed time is known only here.
    absl::MutexLock lock(&mu_);
    for (SyncTraffic& traffic : sync_traffic_) {
      if (traffic.node == node.name) traffic.elapsed = absl::Now() - start;
    }
  }
  return outcome;
}

Executor::Outcome Executor::CheckWorkdir(const Step& step, const NodeSpec& node,
                                         uint64_t bytes) {
  Outcome workdir;
  if (AgentSessionConnection* session = SessionOf(node.name); session != nullptr) {
    // The same check inside the agent: no shell, no df.
    std::string output;
    absl::StatusOr<int> status =
        session->CheckWorkdir(node.workdir, NodeStateDir(node), bytes, options_.step_timeout,
                              &output);
    if (!status.ok()) {
      workdir = Outcome::Failed(absl::StrCat("node '", node.name, "', phase sync, step ",
                                             StepKindName(step.kind), ": ",
                                             status.status().message()));
    } else {
      workdir = CheckFindings(
          step,
          *status == 0 ? Outcome()
                       : Outcome::Failed(absl::StrCat("node '", node.name,
                                                      "', phase sync: the workdir check said: ",
                                                      output),
                                         *status),
          output);
    }
  } else {
    workdir = RunChecks(step, WorkdirCheckScript(node, bytes), nullptr);
  }
  workdir.stops_phase = true;
  return workdir;
}

Executor::Outcome Executor::SyncDirect(const Step& step, const NodeSpec& node) {
  // Before anything is sent: is the workdir there, writable, with room?
  Outcome workdir;
  auto check_workdir = [&](uint64_t bytes) {
    workdir = CheckWorkdir(step, node, bytes);
    return workdir.status == StepStatus::kFailed
               ? absl::FailedPreconditionError(workdir.failure)
               : absl::OkStatus();
  };
  SyncOptions sync;
  sync.ignore_recorded = options_.force;
  if (auto it = recorded_.find(node.name); it != recorded_.end()) sync.recorded = &it->second;
  sync.before_send = check_workdir;
  // The agent arrives with this sync; it checks what did.
  if (!options_.agent_path.empty()) sync.verifier = AgentPath(node);
  sync.after_verify = RecordCommand(step, step.hash);
  if (AgentSessionConnection* session = SessionOf(node.name); session != nullptr) {
    // The check and the record inside the agent.
    std::string record_path = sync.after_verify.empty()
                                  ? ""
                                  : StepRecordPath(node, PhaseName(step.phase));
    sync.verify_on_node = [this, session, &node, record_path, &step](std::string* output) {
      return session->VerifyTree(node.workdir, SyncManifestPath(node), record_path,
                                 absl::StrCat(step.hash, "\n"), options_.step_timeout, output);
    };
  }
  sync.cancel = CancelFor(node.name);
  sync.verify_timeout = options_.step_timeout;
  absl::StatusOr<SyncResult> result = SyncTree(*connections_.at(node.name), sync_manifest_,
                                               node.workdir, SyncManifestPath(node), sync);
  if (workdir.status == StepStatus::kFailed) return workdir;
  if (!result.ok()) {
    return Outcome::Failed(absl::StrCat("node '", node.name, "', phase sync: ",
                                        result.status().message()));
  }
  Outcome outcome;
  outcome.status = result->changed() ? StepStatus::kChanged : StepStatus::kUnchanged;
  // The verifier ran (after any change, or everything sent) and recorded.
  outcome.recorded = !sync.verifier.empty() && !sync.after_verify.empty() &&
                     (result->changed() || sync.ignore_recorded);
  if (result->changed()) {
    NoteSyncChanges(*result);
    outcome.detail = absl::StrCat(result->files_sent, " sent (", result->bytes_sent,
                                  " bytes), ", result->files_removed, " removed; ",
                                  FormatBytes(result->bytes_from_here), " from this machine");
    if (result->bytes_from_here < result->bytes_sent) {
      absl::StrAppend(&outcome.detail, " (shared workdir: ",
                      FormatBytes(result->bytes_sent - result->bytes_from_here),
                      " put there by another node's sync)");
    }
    NoteSyncTraffic({node.name, "direct", result->bytes_sent, result->bytes_from_here});
  }
  return outcome;
}

Executor::Outcome Executor::WriteEnv(const Step& step) {
  bool secrets = !spec_.secrets.empty();
  std::string hash = RecordedHash(step, options_.secrets_digest);
  if (Outcome skip = Skippable(step, hash); skip.status == StepStatus::kUnchanged) {
    return skip;
  }
  Connection& connection = *connections_.at(step.node);
  // The values before the env.sh that sources them; the transports create
  // the file with this mode, never readable by others in between.
  absl::Status written =
      secrets ? connection.WriteFile(SecretsPath(*FindNode(step.node)),
                                     SecretsFileText(options_.secret_values), 0600)
              : absl::OkStatus();
  if (written.ok()) written = connection.WriteFile(step.path, step.content, 0600);
  if (written.ok()) written = Record(step, hash);
  if (!written.ok()) {
    return Outcome::Failed(absl::StrCat("node '", step.node, "', phase ",
                                        PhaseName(step.phase), ": writing ", step.path,
                                        ": ", written.message()));
  }
  return Outcome();
}

Executor::Outcome Executor::RunCommand(const Step& step, const std::string& command,
                                       std::string* output,
                                       const absl::Notification* serving_done,
                                       const EnvList& env) {
  // The output is kept for the failure message.
  OutputBuffer buffer(20);
  const absl::Notification* cancel =
      serving_done != nullptr ? serving_done : CancelFor(step.node);
  // The local build is bazel's to bound.
  bool bounded = step.node != kControllerNode;
  TimedCancel timed(cancel, bounded ? options_.step_timeout : absl::InfiniteDuration());
  OutputCallback on_output = [&buffer](absl::string_view chunk) { buffer.Append(chunk); };
  absl::StatusOr<int> status;
  if (step.node == kControllerNode) {
    status = RunLocalCommand(command, options_.workspace, on_output, cancel);
  } else {
    CommandSpec spec;
    spec.command = command;
    spec.env = env;
    spec.hold_stdin = serving_done != nullptr;
    spec.launches_agent = step.kind == StepKind::kLaunchAgent;
    status = connections_.at(step.node)->Run(spec, on_output, timed.get());
  }
  buffer.Flush();
  *output = buffer.all();
  std::string where = absl::StrCat("node '", step.node, "', phase ",
                                   PhaseName(step.phase), ", step ", StepKindName(step.kind));
  // What went wrong, then the command and the last of its output.
  auto describe = [&](absl::string_view what) {
    std::string message = absl::StrCat(where, ": ", what, "\n  command:\n", Indent(command));
    std::string tail = buffer.Tail();
    if (!tail.empty()) absl::StrAppend(&message, "\n  last output:\n", Indent(tail));
    return message;
  };
  if (timed.timed_out()) {
    return Outcome::Failed(describe(absl::StrCat("still running after ",
                                                 absl::FormatDuration(options_.step_timeout),
                                                 " (--step-timeout), stopped")));
  }
  if (!status.ok()) {
    return Outcome::Failed(absl::StrCat(where, ": ", status.status().message()));
  }
  if (*status != 0) {
    return Outcome::Failed(describe(absl::StrCat("command exited with status ", *status)),
                           *status);
  }
  return Outcome();
}

std::string Executor::StartAgents(const Phase& phase) {
  std::vector<std::optional<Outcome>> outcomes(phase.steps.size());
  std::vector<bool> failed_first(phase.steps.size(), false);
  ParallelFor(
      phase.steps.size(), static_cast<int>(phase.steps.size()),
      [&](size_t i) {
        const Step& step = phase.steps[i];
        reporter_.StepStarted(step);
        absl::Time start = absl::Now();
        // The record of an earlier launch must not outlive a failure of
        // this one: the next apply would not launch again.
        if (const NodeSpec* node = FindNode(step.node); node != nullptr) {
          connections_.at(step.node)
              ->RemoveFiles(NodeStateDir(*node),
                            {StepRecordName(PhaseName(PhaseKind::kLaunch))})
              .IgnoreError();
          ForgetRecord(step);
        }
        Outcome outcome = Execute(step, nullptr);
        // A node that fails before anyone cancelled it is a cause; the
        // others are stopped because of it.
        if (outcome.status == StepStatus::kFailed) {
          if (!CancelFor(step.node)->HasBeenNotified()) {
            failed_first[i] = true;
            CancelAll();
          } else {
            outcome.status = StepStatus::kCancelled;
          }
        }
        reporter_.StepFinished(step, outcome.status, absl::Now() - start, outcome.detail);
        outcomes[i] = std::move(outcome);
      });

  std::string first_failure;
  for (size_t i = 0; i < phase.steps.size() && first_failure.empty(); ++i) {
    if (failed_first[i]) first_failure = outcomes[i]->failure;
  }
  return first_failure;
}

ApplyResult Executor::RunLaunch(const Phase& phase) {
  if (phase.steps.empty()) return {};
  bool changed;
  {
    absl::MutexLock lock(&mu_);
    changed = anything_changed_;
  }
  // All or nothing: a job whose ranks start on some nodes only would wait
  // for the others. Unchanged only after a job that succeeded: one that
  // failed or was stopped runs again.
  if (!changed && !options_.force && AllRecorded(phase)) {
    std::optional<NodeJobState> job = ended_job_.has_value() ? ended_job_ : ReadChiefJobState();
    if (job.has_value() && job->phase == JobPhase::kSucceeded) {
      ReportUnchanged(phase);
      return {};
    }
  }
  run_id_ = MakeRunId(absl::Now(), getpid());
  std::string first_failure = StartAgents(phase);
  bool interrupted;
  {
    absl::MutexLock lock(&mu_);
    interrupted = interrupted_;
  }
  if (interrupted || !first_failure.empty()) {
    // Whatever did start stops: no rank waits for peers that never come.
    absl::Status stopped = StopJob();
    if (interrupted) return {kExitInterrupted, "interrupted"};
    if (!stopped.ok()) absl::StrAppend(&first_failure, "\n", stopped.message());
    return {kExitApplyFailed, first_failure};
  }
  // A node that cannot take the launch's record (its container just died)
  // is the job's to report: the job is followed, and the record's failure
  // said only when the job itself succeeded.
  ApplyResult recorded = RecordPhase(phase);
  // Launched and recorded: following the job changes nothing, and `stop`
  // must be able to take the lock meanwhile.
  UnlockState();
  if (options_.detach && recorded.exit_code != 0) return recorded;
  if (options_.detach) {
    ApplyResult result;
    result.note = absl::StrCat("run ", run_id_, " started on ", spec_.nodes.size(),
                               spec_.nodes.size() == 1 ? " node" : " nodes",
                               "; it runs without apply. Follow it with ", options_.logs_command,
                               ", see it with ", options_.status_command, ", stop it with ",
                               options_.stop_command);
    return result;
  }
  ApplyResult followed = FollowJob(run_id_);
  return followed.exit_code == 0 && recorded.exit_code != 0 ? recorded : followed;
}

}  // namespace fleetplan
