#include "tools/plan/node_scripts.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tools/plan/shell_quote.h"

namespace fleetplan {
namespace {

// `test <condition> || fail <message>` for the preflight script.
std::string CheckLine(absl::string_view condition, absl::string_view message) {
  return absl::StrCat(condition, " || fail ", ShellQuote(message), "\n");
}

std::string PythonCheck(const PythonEnv& python) {
  switch (python.kind) {
    case PythonEnv::Kind::kVenv: {
      std::string activate = absl::StrCat(python.venv, "/bin/activate");
      return CheckLine(absl::StrCat("test -f ", ShellQuote(activate)),
                       absl::StrCat("venv activate script missing: ", activate));
    }
    case PythonEnv::Kind::kConda:
      return CheckLine(absl::StrCat("test -f ", ShellQuote(python.conda_sh)),
                       absl::StrCat("conda.sh missing: ", python.conda_sh));
    case PythonEnv::Kind::kNone:
      break;
  }
  return "";
}

std::string PythonActivation(const PythonEnv& python) {
  switch (python.kind) {
    case PythonEnv::Kind::kVenv:
      return absl::StrCat(". ", ShellQuote(absl::StrCat(python.venv, "/bin/activate")),
                          "\n");
    case PythonEnv::Kind::kConda:
      return absl::StrCat(". ", ShellQuote(python.conda_sh), "\nconda activate ",
                          ShellQuote(python.conda), "\n");
    case PythonEnv::Kind::kNone:
      break;
  }
  return "";
}

}  // namespace

std::string LabelTargetName(absl::string_view label) {
  size_t colon = label.rfind(':');
  if (colon != absl::string_view::npos) return std::string(label.substr(colon + 1));
  label = absl::StripSuffix(label, "/");
  size_t slash = label.rfind('/');
  if (slash != absl::string_view::npos) return std::string(label.substr(slash + 1));
  return std::string(absl::StripPrefix(label, "@"));
}

std::string UnderWorkdir(const NodeSpec& node, absl::string_view relative) {
  absl::string_view workdir = node.workdir;
  while (workdir.size() > 1 && absl::EndsWith(workdir, "/")) {
    workdir.remove_suffix(1);
  }
  relative = absl::StripPrefix(relative, "./");
  if (workdir == "/") return absl::StrCat("/", relative);
  return absl::StrCat(workdir, "/", relative);
}

std::string EnvScriptPath(const NodeSpec& node) {
  return UnderWorkdir(node, absl::StrCat(".fleetplan/nodes/", node.name, "/env.sh"));
}

std::string ProgramPath(const JobSpec& job, const NodeSpec& node) {
  if (job.program_is_label()) {
    return UnderWorkdir(node,
                        absl::StrCat(".fleetplan/bin/", LabelTargetName(job.program)));
  }
  if (absl::StartsWith(job.program, "/")) return job.program;
  return UnderWorkdir(node, job.program);
}

std::string EnvScript(const NodeSpec& node, const std::vector<NodeVar>& node_env) {
  std::string script =
      "# Written by fleetplan: the environment shared by this node's ranks.\n";
  absl::StrAppend(&script, PythonActivation(node.python));
  for (const NodeVar& var : node_env) {
    absl::StrAppend(&script, "export ", var.name, "=",
                    var.expand_on_node ? ShellWordExpandingVars(var.value)
                                       : ShellQuote(var.value),
                    "\n");
  }
  return script;
}

std::string PreflightScript(const NodeSpec& node) {
  std::string state_dir = UnderWorkdir(node, absl::StrCat(".fleetplan/nodes/", node.name));
  std::string script = "fail() { printf '%s\\n' \"$1\" >&2; exit 1; }\n";
  absl::StrAppend(
      &script,
      CheckLine(absl::StrCat("mkdir -p ", ShellQuote(state_dir)),
                absl::StrCat("cannot create ", state_dir)),
      CheckLine(absl::StrCat("test -w ", ShellQuote(node.workdir)),
                absl::StrCat("workdir not writable: ", node.workdir)),
      PythonCheck(node.python));
  return script;
}

std::string LaunchCommand(const JobSpec& job, const NodeSpec& node,
                          int first_rank) {
  std::string command = absl::StrCat(
      "cd ", ShellQuote(node.workdir), " && . ", ShellQuote(EnvScriptPath(node)),
      " && exec ", ShellQuote(UnderWorkdir(node, ".fleetplan/bin/fleetplan-agent")),
      " ", ShellQuote(absl::StrCat("--node=", node.name)),
      " --first-rank=", first_rank, " --nproc=", node.nproc,
      " --restarts=", job.restarts, " ",
      ShellQuote(absl::StrCat("--log-dir=",
                              UnderWorkdir(node, absl::StrCat(".fleetplan/nodes/",
                                                              node.name, "/logs")))),
      " -- ", ShellQuote(ProgramPath(job, node)));
  for (const std::string& arg : job.args) {
    absl::StrAppend(&command, " ", ShellQuote(arg));
  }
  return command;
}

std::string EnsureKeyCommand() {
  return "test -f ~/.ssh/id_ed25519 || { mkdir -p ~/.ssh && chmod 700 ~/.ssh && "
         "ssh-keygen -q -t ed25519 -N '' -f ~/.ssh/id_ed25519; } && "
         "cat ~/.ssh/id_ed25519.pub";
}

std::string BazelBuildCommand(absl::string_view label) {
  return absl::StrCat("bazel build ", ShellQuote(label));
}

}  // namespace fleetplan
