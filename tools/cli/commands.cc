#include "tools/cli/commands.h"

#include <unistd.h>

#include <cstdio>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "plugins/transport.h"
#include "tools/apply/connect_nodes.h"
#include "tools/apply/job_control.h"
#include "tools/apply/progress.h"
#include "tools/util/flags.h"
#include "tools/cli/paths.h"
#include "tools/cli/prepare.h"
#include "tools/cli/saved_plan.h"
#include "tools/cli/secret_sources.h"
#include "tools/cli/signals.h"
#include "tools/cli/spec_lock.h"
#include "tools/plan/compile.h"
#include "tools/plan/render.h"
#include "tools/process/files.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

int Fail(absl::string_view command, absl::string_view message, int code) {
  std::fprintf(stderr, "%.*s: %.*s\n", static_cast<int>(command.size()), command.data(),
               static_cast<int>(message.size()), message.data());
  return code;
}

// A spec, plan or cluster that cannot be used is bad input (2); a cluster
// that did not answer (a Slurm controller) is a failure that may pass (1).
int PrepareExitCode(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status) ? kExitApplyFailed
                                                                          : kExitBadInput;
}

// The plan to apply: computed from a spec, or a saved one that must still
// match what computing it now gives.
absl::StatusOr<Prepared> PrepareTarget(const std::string& target,
                                       const TransportOptions& resolve) {
  std::string path = ResolveUserPath(target);
  if (!LooksLikeSavedPlan(path)) return PrepareFromFile(path, &resolve);
  absl::StatusOr<std::string> json = ReadFileToString(path);
  if (!json.ok()) return json.status();
  absl::StatusOr<SavedPlanRef> saved = ParseSavedPlan(*json);
  if (!saved.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", saved.status().message()));
  }
  absl::StatusOr<Prepared> fresh = PrepareFromFile(saved->spec_path, &resolve);
  if (!fresh.ok()) return fresh.status();
  absl::Status current = CheckPlanCurrent(*saved, fresh->plan, fresh->spec.sync.source);
  if (current.ok()) return fresh;
  // A plan saved before the transport knew the hosts (a Slurm allocation)
  // names placeholders: it is current when the spec as written still gives it.
  absl::StatusOr<Prepared> as_written = PrepareFromFile(saved->spec_path);
  if (as_written.ok() &&
      CheckPlanCurrent(*saved, as_written->plan, as_written->spec.sync.source).ok()) {
    return fresh;
  }
  if (!resolve.read_only) ReleaseSpec(fresh->spec).IgnoreError();
  return current;
}

// The spec's [secrets] values and their keyed digest, into `options`.
absl::Status ReadSecrets(const ClusterSpec& spec, ApplyOptions* options) {
  if (spec.secrets.empty()) return absl::OkStatus();
  FP_ASSIGN_OR_RETURN(options->secret_values, ResolveSecrets(spec.secrets));
  FP_ASSIGN_OR_RETURN(JobKey key, LoadOrMakeDigestKey(DigestKeyPath()));
  FP_ASSIGN_OR_RETURN(options->secrets_digest, SecretsDigest(key, options->secret_values));
  return absl::OkStatus();
}

// Stops the job on the nodes that can be reached (nothing of it may outlive
// what holds it), then undoes what apply created for each node.
int Destroy(const ClusterSpec& spec, const ConnectionFactory& factory, const TransportOptions& options,
            absl::Duration lock_timeout) {
  int code = 0;
  TransportOptions reach = options;
  reach.read_only = true;  // start or create nothing just to stop it
  absl::StatusOr<NodeConnections> connections =
      ConnectNodes(factory, spec, reach, static_cast<int>(spec.nodes.size()), Tolerate::kNotThere);
  std::unique_ptr<HeldSpecLock> lock;
  if (connections.ok()) {
    absl::StatusOr<std::unique_ptr<HeldSpecLock>> locked =
        LockSpec(spec, connections->open, lock_timeout);
    if (!locked.ok()) return Fail("apply --destroy", locked.status().message(),
                                  LockExitCode(locked.status()));
    lock = std::move(*locked);
  }
  if (connections.ok() && !connections->open.empty()) {
    if (absl::Status stopped = JobControl(spec, connections->open).Stop(); !stopped.ok()) {
      std::fprintf(stderr, "destroy: cannot stop the job: %s\n",
                   std::string(stopped.message()).c_str());
      return kExitApplyFailed;
    }
  }
  for (const NodeSpec& node : spec.nodes) {
    absl::StatusOr<Transport*> transport = TransportRegistry::Global().Find(node.transport);
    absl::Status status = transport.ok() ? (*transport)->Destroy(spec, node)
                                         : transport.status();
    if (status.ok()) {
      std::printf("[%s] destroyed\n", node.name.c_str());
    } else {
      std::fprintf(stderr, "[%s] destroy failed: %s\n", node.name.c_str(),
                   std::string(status.message()).c_str());
      code = kExitApplyFailed;
    }
  }
  return code;
}

// The executor's options as the flags gave them, checked; a zero step
// timeout means none.
absl::StatusOr<ApplyOptions> CheckedOptions(ApplyOptions options) {
  if (options.parallelism < 1) {
    return absl::InvalidArgumentError("--parallelism must be at least 1");
  }
  if (options.lock_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--lock-timeout must not be negative");
  }
  if (options.step_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--step-timeout must not be negative");
  }
  if (options.step_timeout == absl::ZeroDuration()) {
    options.step_timeout = absl::InfiniteDuration();
  }
  return options;
}

// `plan --check`: the preflight checks alone, read-only, with their summary.
int RunChecks(const PlanCommand& command, const Prepared& prepared, bool color) {
  absl::StatusOr<ApplyOptions> checked = CheckedOptions(command.options);
  if (!checked.ok()) return Fail("plan", checked.status().message(), kExitBadInput);
  absl::StatusOr<Plan> plan = CompileCheckPlan(prepared.spec, prepared.inputs);
  if (!plan.ok()) return Fail("plan", plan.status().message(), kExitBadInput);
  ApplyOptions options = *checked;
  options.check_only = true;
  options.transport.read_only = true;
  std::unique_ptr<ProgressReporter> reporter = MakeReporter(
      command.json ? ReportStyle::kJson : ReportStyle::kSummary, stdout, color, {});
  Executor executor(prepared.spec, *plan, prepared.source, options, *reporter,
                    *command.connections);
  OnInterrupt([&executor] { executor.Interrupt(); });
  ApplyResult result = executor.Run();
  OnInterrupt(nullptr);
  if (command.json) {
    reporter->Finished(result.exit_code == 0, result.exit_code, result.message);
  } else if (result.exit_code == 0) {
    size_t not_there = executor.NodesNotThereYet().size();
    size_t checked = prepared.spec.nodes.size() - not_there;
    if (checked > 0) {
      std::printf("every check passed on %zu node%s", checked, checked == 1 ? "" : "s");
    } else {
      std::printf("no node checked");
    }
    if (not_there > 0) {
      std::printf("%s%zu not created yet (apply creates them)", checked > 0 ? "; " : ": ",
                  not_there);
    }
    std::printf("\n");
  } else {
    Fail("plan --check", result.message, result.exit_code);
  }
  return result.exit_code;
}

// `plan --refresh`: what apply would do to each step, from what the nodes
// hold; read-only.
absl::StatusOr<std::vector<StepForecast>> Forecast(const PlanCommand& command,
                                                   const Prepared& prepared) {
  FP_ASSIGN_OR_RETURN(ApplyOptions options, CheckedOptions(command.options));
  options.transport.read_only = true;
  // The [secrets] values as apply would read them: their keyed digest is
  // part of the environment step's record. One that cannot be read is
  // bad input, as for apply (exit 2).
  if (absl::Status read = ReadSecrets(prepared.spec, &options); !read.ok()) {
    return absl::InvalidArgumentError(read.message());
  }
  // Reading reports no steps; a reporter is what the executor is built with.
  std::unique_ptr<ProgressReporter> reporter =
      MakeReporter(ReportStyle::kPlain, stderr, false, {});
  Executor executor(prepared.spec, prepared.plan, prepared.source, options, *reporter,
                    *command.connections);
  absl::StatusOr<std::map<std::string, NodeState>> states = executor.ReadNodeStates();
  if (!states.ok()) return states.status();
  return ForecastPlan(prepared.plan, *states, options.secrets_digest);
}

}  // namespace

int RunPlanCommand(const PlanCommand& command) {
  absl::StatusOr<bool> color = UseColor(command.color, STDOUT_FILENO);
  if (!color.ok()) return Fail("plan", color.status().message(), kExitBadInput);
  if (command.check && !command.out.empty()) {
    return Fail("plan", "--check and --out do not go together", kExitBadInput);
  }
  // --check and --refresh read the nodes: those a transport decides at
  // apply (a Slurm allocation) are shown by their hosts once they have them.
  TransportOptions read_only = command.options.transport;
  read_only.read_only = true;
  absl::StatusOr<Prepared> prepared =
      PrepareFromFile(ResolveUserPath(command.spec),
                      command.check || command.refresh ? &read_only : nullptr);
  if (!prepared.ok()) {
    return Fail("plan", prepared.status().message(), PrepareExitCode(prepared.status()));
  }
  if (command.check && command.refresh) {
    return Fail("plan", "--check and --refresh do not go together", kExitBadInput);
  }
  if (command.check) return RunChecks(command, *prepared, *color);
  const Plan& plan = prepared->plan;
  std::string text;
  if (command.refresh) {
    absl::StatusOr<std::vector<StepForecast>> forecast = Forecast(command, *prepared);
    if (!forecast.ok()) {
      return Fail("plan --refresh", forecast.status().message(),
                  absl::IsInvalidArgument(forecast.status()) ? kExitBadInput
                                                             : kExitApplyFailed);
    }
    text = command.json ? RenderForecastJson(plan, *forecast)
                        : RenderPlanText(plan, *color, &*forecast);
  } else {
    text = command.json ? RenderPlanJson(plan) : RenderPlanText(plan, *color);
  }
  std::fputs(text.c_str(), stdout);
  if (!command.out.empty()) {
    std::string out = ResolveUserPath(command.out);
    absl::Status saved = SavePlan(plan, out);
    if (!saved.ok()) return Fail("plan", saved.message(), kExitApplyFailed);
    // On stderr, so that `plan --json` output stays one JSON document.
    std::fprintf(stderr, "Saved the plan to %s; apply exactly this plan with:\n  %s\n",
                 out.c_str(), CommandHint("apply", out).c_str());
  }
  return 0;
}

int RunApplyCommand(ApplyCommand command) {
  OnInterrupt(nullptr);  // signals blocked before any thread starts
  absl::StatusOr<bool> color = UseColor(command.color, STDOUT_FILENO);
  if (!color.ok()) return Fail("apply", color.status().message(), kExitBadInput);
  absl::StatusOr<ApplyOptions> checked = CheckedOptions(command.options);
  if (!checked.ok()) return Fail("apply", checked.status().message(), kExitBadInput);
  command.options = *checked;
  // --destroy and --force-unlock obtain nothing: they find what an
  // earlier apply obtained.
  TransportOptions resolve = command.options.transport;
  resolve.read_only = resolve.read_only || command.destroy || command.force_unlock;
  absl::StatusOr<Prepared> prepared = PrepareTarget(command.target, resolve);
  if (!prepared.ok()) {
    return Fail("apply", prepared.status().message(), PrepareExitCode(prepared.status()));
  }
  if (command.force_unlock) return ForceUnlockSpec(prepared->spec, command.options.transport);
  if (command.destroy) {
    return Destroy(prepared->spec, *command.connections, command.options.transport,
                   command.options.lock_timeout);
  }
  command.options.workspace = WorkspaceDirectory(command.workspace);
  if (prepared->spec.job.program_is_label() && command.options.workspace.empty()) {
    ReleaseSpec(prepared->spec).IgnoreError();
    return Fail("apply",
                absl::StrCat("the program ", prepared->spec.job.program,
                             " is a Bazel label: it is built in its workspace, and the current "
                             "directory is in none; run fleetplan inside the workspace or pass "
                             "--workspace DIR"),
                kExitBadInput);
  }
  // Every secret has a value here before any node is connected to.
  if (absl::Status read = ReadSecrets(prepared->spec, &command.options); !read.ok()) {
    ReleaseSpec(prepared->spec).IgnoreError();
    return Fail("apply", read.message(), kExitBadInput);
  }

  absl::StatusOr<std::string> agent = FindAgent(command.argv0, command.agent);
  if (!agent.ok()) return Fail("apply", agent.status().message(), kExitApplyFailed);
  command.options.agent_path = *agent;
  // The lifecycle commands, as the user would type them for this spec.
  std::string spec_arg = absl::EndsWith(command.target, ".toml") ? command.target
                                                                 : prepared->spec.spec_path;
  command.options.status_command = CommandHint("status", spec_arg);
  command.options.logs_command = CommandHint("logs", absl::StrCat(spec_arg, " --follow"));
  command.options.stop_command = CommandHint("stop", spec_arg);

  std::vector<std::string> nodes;
  for (const NodeSpec& node : prepared->spec.nodes) nodes.push_back(node.name);
  ReportStyle style = command.json                    ? ReportStyle::kJson
                      : isatty(STDOUT_FILENO) == 1 ? ReportStyle::kLive
                                                   : ReportStyle::kPlain;
  std::unique_ptr<ProgressReporter> reporter =
      MakeReporter(style, stdout, *color && !command.json, nodes);
  command.options.lock_state = true;
  command.options.on_lock_message = [](absl::string_view message) {
    std::fprintf(stderr, "apply: %.*s\n", static_cast<int>(message.size()), message.data());
  };
  Executor executor(prepared->spec, prepared->plan, prepared->source, command.options,
                    *reporter, *command.connections);
  OnInterrupt([&executor] { executor.Interrupt(); });
  ApplyResult result = executor.Run();
  OnInterrupt(nullptr);
  if (result.exit_code != 0 && !result.job_untouched) {
    // Nothing of a failed apply is kept (a Slurm allocation is cancelled).
    if (absl::Status released = ReleaseSpec(prepared->spec); !released.ok()) {
      result.message = absl::StrCat(result.message, "; and releasing failed: ", released.message());
    }
  }
  reporter->Finished(result.exit_code == 0, result.exit_code,
                     result.exit_code == 0 ? result.note : result.message);
  return result.exit_code;
}

}  // namespace fleetplan
