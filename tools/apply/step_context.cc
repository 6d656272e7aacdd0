#include "tools/apply/step_context.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "tools/apply/local_build.h"
#include "tools/apply/output_buffer.h"
#include "tools/apply/parallel_for.h"
#include "tools/util/timed_cancel.h"

namespace fleetplan {
namespace {

std::string Indent(absl::string_view text) {
  return absl::StrCat("    ", absl::StrReplaceAll(text, {{"\n", "\n    "}}));
}

}  // namespace

const NodeSpec* StepContext::FindNode(const std::string& name) const {
  return spec.FindNode(name);
}

const std::string& StepContext::PhasePreamble(PhaseKind kind) const {
  if (const Phase* phase = FindPhase(plan, kind); phase != nullptr) return phase->preamble;
  static const std::string* kNone = new std::string();
  return *kNone;
}

StepOutcome UnknownNode(const Step& step) {
  return StepOutcome::Failed(absl::StrCat("phase ", PhaseName(step.phase),
                                          ": the plan names node '", step.node,
                                          "', which the spec does not list"));
}

StepOutcome RunStepCommand(const StepContext& context, const Step& step, const std::string& command,
                           std::string* output, const absl::Notification* serving_done) {
  // The output is kept for the failure message.
  OutputBuffer buffer(20);
  const absl::Notification* cancel =
      serving_done != nullptr ? serving_done : context.channels.CancelFor(step.node);
  // The local build is bazel's to bound.
  bool bounded = step.node != kControllerNode;
  const absl::Duration timeout = context.options.step_timeout;
  TimedCancel timed(cancel, bounded ? timeout : absl::InfiniteDuration());
  OutputCallback on_output = [&buffer](absl::string_view chunk) { buffer.Append(chunk); };
  absl::StatusOr<int> status;
  if (step.node == kControllerNode) {
    status = RunLocalCommand(command, context.options.workspace, on_output, cancel);
  } else {
    CommandSpec spec;
    spec.command = command;
    spec.hold_stdin = serving_done != nullptr;
    spec.launches_agent = step.kind == StepKind::kLaunchAgent;
    status = context.channels.Of(step.node).Run(spec, on_output, timed.get());
  }
  buffer.Flush();
  *output = buffer.all();
  std::string where = absl::StrCat("node '", step.node, "', phase ", PhaseName(step.phase),
                                   ", step ", StepKindName(step.kind));
  // What went wrong, then the command and the last of its output.
  auto describe = [&](absl::string_view what) {
    std::string message = absl::StrCat(where, ": ", what, "\n  command:\n", Indent(command));
    std::string tail = buffer.Tail();
    if (!tail.empty()) absl::StrAppend(&message, "\n  last output:\n", Indent(tail));
    return message;
  };
  if (timed.timed_out()) {
    return StepOutcome::Failed(describe(absl::StrCat(
        "still running after ", absl::FormatDuration(timeout), " (--step-timeout), stopped")));
  }
  if (!status.ok()) {
    return StepOutcome::Failed(absl::StrCat(where, ": ", status.status().message()));
  }
  if (*status != 0) {
    return StepOutcome::Failed(describe(absl::StrCat("command exited with status ", *status)),
                               *status);
  }
  return StepOutcome();
}

void StepScheduler::RunOne(const Step& step, const absl::Notification* serving_done) const {
  context_.reporter.StepStarted(step);
  absl::Time start = absl::Now();
  StepOutcome outcome = execute_(step, serving_done);
  if (outcome.status == StepStatus::kFailed &&
      context_.channels.CancelFor(step.node)->HasBeenNotified()) {
    outcome.status = StepStatus::kCancelled;
  }
  context_.reporter.StepFinished(step, outcome.status, absl::Now() - start,
                                 outcome.status == StepStatus::kFailed ? "" : outcome.detail);
  if (outcome.status == StepStatus::kChanged) {
    // A sync says itself whether it changed what a check looks at.
    context_.state.NoteChanged(/*checked=*/step.kind != StepKind::kSyncTree);
  }
  if (outcome.status == StepStatus::kFailed && outcome.stops_phase) {
    context_.state.NoteFailure(outcome.failure);
  }
}

void StepScheduler::RunAll(const std::vector<const Step*>& steps, int threads) const {
  ParallelFor(
      steps.size(), threads, [&](size_t i) { RunOne(*steps[i]); },
      [this] { return !context_.state.Stopping(); });
}

}  // namespace fleetplan
