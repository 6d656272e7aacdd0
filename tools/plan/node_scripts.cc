#include "tools/plan/node_scripts.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "tools/protocol/agent_command.h"
#include "tools/util/shell_quote.h"

namespace fleetplan {

std::string LabelTargetName(absl::string_view label) {
  size_t colon = label.rfind(':');
  if (colon != absl::string_view::npos) return std::string(label.substr(colon + 1));
  label = absl::StripSuffix(label, "/");
  size_t slash = label.rfind('/');
  if (slash != absl::string_view::npos) return std::string(label.substr(slash + 1));
  return std::string(absl::StripPrefix(label, "@"));
}

std::string ProgramPath(const JobSpec& job, const NodeSpec& node) {
  if (job.program_is_label()) {
    return BinPath(node, LabelTargetName(job.program));
  }
  if (absl::StartsWith(job.program, "/")) return job.program;
  // A bare name is looked up on the PATH of the ranks' environment (the
  // activated venv or conda env, the spec's env), as a shell does.
  if (job.program.find('/') == std::string::npos) return job.program;
  return UnderWorkdir(node, job.program);
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

std::string EnvExports(const std::vector<NodeVar>& node_env) {
  std::string exports;
  for (const NodeVar& var : node_env) {
    absl::StrAppend(&exports, "export ", var.name, "=",
                    var.expand_on_node ? ShellWordExpandingVars(var.value)
                                       : ShellQuote(var.value),
                    "\n");
  }
  return exports;
}

std::string EnvScript(const NodeSpec& node, const std::vector<NodeVar>& node_env,
                      bool nccl_auto, const std::vector<SecretSpec>& secrets) {
  std::string script = absl::StrCat(
      "# Written by fleetplan: the environment shared by this node's ranks.\n",
      PythonActivation(node.python), EnvExports(node_env));
  if (nccl_auto) {
    std::string found = ShellQuote(PreflightEnvPath(node));
    absl::StrAppend(&script,
                    "# NCCL_SOCKET_IFNAME = \"auto\": the interface preflight found here.\n",
                    "if [ -f ", found, " ]; then . ", found, "; fi\n");
  }
  if (!secrets.empty()) {
    std::vector<absl::string_view> names;
    for (const SecretSpec& secret : secrets) names.push_back(secret.name);
    // Missing only before the first apply (exec); the agent refuses to
    // start ranks without a named secret.
    std::string file = ShellQuote(SecretsPath(node));
    absl::StrAppend(&script, "# [secrets]: their values are in a file only this user can read.\n",
                    "export ", kSecretNamesVar, "=", absl::StrJoin(names, ","), "\n",
                    "if [ -f ", file, " ]; then . ", file, "; fi\n");
  }
  return script;
}

std::string SecretsFileText(const EnvList& values) {
  std::string text = "# Written by fleetplan apply: [secrets], for this user only.\n";
  for (const auto& [name, value] : values) {
    absl::StrAppend(&text, "export ", name, "=", ShellQuote(value), "\n");
  }
  return text;
}

std::vector<std::string> EnvScripts(const ClusterSpec& spec) {
  std::vector<GenerationPlace> places = PlannedPlaces(spec);
  bool nccl_auto = spec.network.nccl_socket_ifname == "auto";
  std::vector<std::string> scripts;
  scripts.reserve(spec.nodes.size());
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    scripts.push_back(
        EnvScript(spec.nodes[i], NodeEnvironment(spec, i, places[i].place), nccl_auto,
                  spec.secrets));
  }
  return scripts;
}

std::string ShellCommandLine(const std::vector<std::string>& argv) {
  if (argv.size() == 1) return argv[0];
  std::vector<std::string> words;
  words.reserve(argv.size());
  for (const std::string& arg : argv) words.push_back(ShellQuote(arg));
  return absl::StrJoin(words, " ");
}

std::string ExecCommand(const NodeSpec& node, absl::string_view env_script,
                        absl::string_view command_line) {
  std::string env = ShellQuote(EnvScriptPath(node));
  std::string workdir = ShellQuote(node.workdir);
  return absl::StrCat(
      "if [ -f ", env, " ]; then . ", env, "; else :\n", env_script, "fi\n",
      "cd ", workdir, " 2>/dev/null || { echo ",
      ShellQuote(absl::StrCat("fleetplan exec: ", node.workdir,
                              " does not exist on this node yet (apply has not run here); "
                              "running in the home folder")),
      " >&2; cd; }\n", command_line, "\n");
}

AgentLaunch LaunchRequest(const JobSpec& job, const NodeSpec& node, int first_rank,
                          const Supervision& supervision) {
  AgentLaunch launch;
  launch.node = node.name;
  launch.first_rank = first_rank;
  launch.nproc = node.nproc;
  launch.restarts = job.restarts;
  launch.log_dir = NodeLogDir(node);
  launch.key_file = JobKeyPath(node);
  launch.detach = true;
  launch.supervision = supervision;
  launch.hang_timeout = job.hang_timeout.value_or(absl::ZeroDuration());
  launch.launcher = job.launcher;
  launch.progress = job.progress;
  launch.program = {ProgramPath(job, node)};
  launch.program.insert(launch.program.end(), job.args.begin(), job.args.end());
  // The state folder is the job's user's alone (the agent tightens one an
  // earlier version made 0755, on every launch).
  launch.private_dir = UnderWorkdir(node, kStateDirName);
  return launch;
}

std::string LaunchCommandLine(const NodeSpec& node, const AgentLaunch& launch) {
  return absl::StrCat("cd ", ShellQuote(node.workdir), " && . ",
                      ShellQuote(EnvScriptPath(node)), " && exec ",
                      AgentCommandLine(AgentPath(node), launch));
}

std::string LogsCommand(const NodeSpec& node, const LogsRequest& request) {
  AgentLogs logs;
  logs.log_dir = NodeLogDir(node);
  logs.node = node.name;
  logs.run_id = request.run_id;
  logs.rank = request.rank;
  logs.tail = request.tail;
  logs.follow = request.follow;
  return absl::StrCat("exec ", AgentCommandLine(AgentPath(node), logs));
}

std::string StopCommand(const NodeSpec& node) {
  AgentStop stop;
  stop.log_dir = NodeLogDir(node);
  return absl::StrCat("exec ", AgentCommandLine(AgentPath(node), stop));
}

std::string StacksCommand(const NodeSpec& node) {
  AgentStacks stacks;
  stacks.log_dir = NodeLogDir(node);
  stacks.node = node.name;
  return absl::StrCat("exec ", AgentCommandLine(AgentPath(node), stacks));
}

std::string TopCommand(const NodeSpec& node) {
  AgentTop top;
  top.log_dir = NodeLogDir(node);
  top.node = node.name;
  return absl::StrCat("exec ", AgentCommandLine(AgentPath(node), top));
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
