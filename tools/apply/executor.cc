#include "tools/apply/executor.h"

#include <thread>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "tools/apply/env_step.h"

namespace fleetplan {

Executor::Executor(const ClusterSpec& spec, const Plan& plan, const Manifest& source,
                   ApplyOptions options, ProgressReporter& reporter,
                   const ConnectionFactory& connections)
    : options_(std::move(options)),
      source_(source),
      channels_(spec, connections),
      records_(spec, channels_, options_),
      context_{spec, plan, options_, reporter, channels_, records_, state_},
      scheduler_(context_,
                 [this](const Step& step, const absl::Notification* serving_done) {
                   return Execute(step, serving_done);
                 }),
      build_(context_),
      keys_(context_),
      checks_(context_, scheduler_),
      sync_(context_, scheduler_, checks_, source_),
      launch_(
          context_, [this] { return ReadNodeStates(); }, [this] { lock_.Release(); }),
      lock_(spec, options_, channels_, state_) {}

Executor::~Executor() = default;

absl::Status Executor::Open(bool tolerate_not_there) {
  // plan --check and --refresh change nothing; an agent shipped by nothing
  // (tests without one) is not asked for.
  bool sessions = !options_.agent_path.empty() && !options_.check_only &&
                  !options_.transport.read_only;
  return channels_.Open(options_.transport, options_.parallelism, tolerate_not_there, sessions);
}

ApplyResult Executor::Run() {
  // `plan --check` skips what is not there yet; apply needs every node.
  absl::Status opened = Open(/*tolerate_not_there=*/options_.check_only);
  if (!opened.ok()) return {kExitApplyFailed, std::string(opened.message())};
  // Before anything is read: what another apply is writing is no state.
  if (!options_.check_only) {
    if (std::optional<ApplyResult> locked = lock_.Acquire(); locked.has_value()) return *locked;
  }
  absl::Cleanup unlock = [this] { lock_.Release(); };
  // What an earlier Run found is not this one's.
  state_.Reset();
  build_.Reset();
  checks_.Reset();
  launch_.Reset();
  if (!options_.check_only) {
    if (std::optional<ApplyResult> ended = ReadAhead(); ended.has_value()) return *ended;
  }
  return RunPhases();
}

std::optional<ApplyResult> Executor::ReadAhead() {
  const Plan& plan = context_.plan;
  // The other nodes' manifests are read meanwhile (a sync may relay); only
  // the chief's connection is used here until they are.
  std::thread read_ahead([this] { sync_.ReadAhead(context_.spec.chief().name); });
  std::optional<NodeJobState> job = FindPhase(plan, PhaseKind::kLaunch) != nullptr
                                        ? launch_.ChiefJobState()
                                        : std::nullopt;
  read_ahead.join();
  records_.ReadAhead(plan);
  return launch_.CheckRunningJob(job);
}

ApplyResult Executor::RunPhases() {
  ApplyResult last;
  for (const Phase& phase : context_.plan.phases) {
    ApplyResult result = RunPhase(phase);
    if (state_.interrupted() && result.exit_code != kExitInterrupted) {
      result = {kExitInterrupted, "interrupted"};
    }
    if (result.exit_code != 0) {
      // Checks that ran before apply stopped (the workdir's, before a sync).
      checks_.Report();
      return result;
    }
    last = result;
  }
  return last;
}

ApplyResult Executor::RunPhase(const Phase& phase) {
  switch (phase.kind) {
    case PhaseKind::kLaunch:
      return launch_.RunPhase(phase);
    case PhaseKind::kPreflight:
      return checks_.RunPhase(phase);
    case PhaseKind::kSync:
      return sync_.RunPhase(phase, build_.built());
    default:
      RunWaves(phase);
      if (state_.failed()) return {kExitApplyFailed, state_.failure()};
      return {};
  }
}

void Executor::RunWaves(const Phase& phase) {
  std::map<int, std::vector<const Step*>> waves;
  for (const Step& step : phase.steps) waves[step.wave].push_back(&step);
  for (const auto& [wave, steps] : waves) {
    if (state_.Stopping()) return;
    scheduler_.RunAll(steps, options_.parallelism);
  }
}

void Executor::Interrupt() {
  state_.Interrupt();
  channels_.CancelAll();
}

StepOutcome Executor::Execute(const Step& step, const absl::Notification* serving_done) {
  if (step.kind == StepKind::kBazelBuild) return build_.Run(step);
  if (context_.FindNode(step.node) == nullptr) return UnknownNode(step);
  switch (step.kind) {
    case StepKind::kBazelBuild:
      return build_.Run(step);  // not reached: it runs on the controller, above
    case StepKind::kEnsureKey:
      return keys_.EnsureKey(step);
    case StepKind::kAuthorizeKey:
      return keys_.AuthorizeKey(step);
    case StepKind::kSyncTree:
      return sync_.Run(step);
    case StepKind::kWriteEnv:
      return WriteEnvironment(context_, step);
    case StepKind::kCheck:
      return checks_.Run(step, absl::StrCat(context_.PhasePreamble(step.phase), step.command),
                         serving_done);
    case StepKind::kLaunchAgent:
      return launch_.Run(step);
  }
  return StepOutcome::Failed(absl::StrCat("node '", step.node, "', phase ",
                                          PhaseName(step.phase), ": unknown step kind '",
                                          StepKindName(step.kind), "'"));
}

}  // namespace fleetplan
