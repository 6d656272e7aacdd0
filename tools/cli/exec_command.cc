#include "tools/cli/exec_command.h"

#include <cstdio>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "nlohmann/json.hpp"
#include "tools/apply/connect_nodes.h"
#include "tools/apply/executor.h"
#include "tools/apply/output_buffer.h"
#include "tools/apply/parallel_for.h"
#include "tools/cli/signals.h"
#include "tools/plan/node_scripts.h"
#include "tools/util/flags.h"

namespace fleetplan {
namespace {

// What ssh exits with when it cannot reach the host; pdsh reports the same.
constexpr int kExitUnreachable = 255;

struct NodeResult {
  std::optional<int> exit_status;  // none: the command did not run to its end
  std::string error;               // why not
};

// Connects to `node` and runs `command` there, passing each line of its
// output to `on_line`.
NodeResult RunOnNode(const ConnectionFactory& connections, const ClusterSpec& spec,
                     const NodeSpec& node, const TransportOptions& transport,
                     const std::string& command,
                     const std::function<void(absl::string_view)>& on_line,
                     const absl::Notification& cancel) {
  NodeResult result;
  absl::StatusOr<std::unique_ptr<Connection>> connection =
      connections.Connect(spec, node, transport);
  if (!connection.ok()) {
    result.error = absl::StrCat("cannot connect (", node.transport,
                                "): ", connection.status().message());
    return result;
  }
  if (cancel.HasBeenNotified()) {
    result.error = "interrupted";
    return result;
  }
  OutputBuffer lines(/*keep_lines=*/0, on_line);
  CommandSpec spec_command;
  spec_command.command = command;
  absl::StatusOr<int> status = (*connection)->Run(
      spec_command, [&lines](absl::string_view chunk) { lines.Append(chunk); }, &cancel);
  lines.Flush();
  if (status.ok()) {
    result.exit_status = *status;
  } else {
    result.error = std::string(status.status().message());
  }
  return result;
}

int ExitStatusOf(const NodeResult& result) {
  return result.exit_status.value_or(kExitUnreachable);
}

void PrintJson(const ExecOptions& options, const std::vector<const NodeSpec*>& nodes,
               const std::vector<NodeResult>& results, const std::vector<std::string>& outputs,
               int exit_status) {
  nlohmann::json out = {{"command", options.command},
                        {"exit_status", exit_status},
                        {"nodes", nlohmann::json::array()}};
  for (size_t i = 0; i < nodes.size(); ++i) {
    nlohmann::json node = {{"node", nodes[i]->name}, {"output", outputs[i]}};
    if (results[i].exit_status.has_value()) {
      node["exit_status"] = *results[i].exit_status;
    } else {
      node["exit_status"] = nullptr;
      node["error"] = results[i].error;
    }
    out["nodes"].push_back(std::move(node));
  }
  std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

// "exec: 3 nodes: 2 exited 0, 1 failed", then a line per failed node.
void PrintSummary(const std::vector<const NodeSpec*>& nodes,
                  const std::vector<NodeResult>& results) {
  size_t ok = 0;
  for (const NodeResult& result : results) ok += result.exit_status == 0;
  std::fprintf(stderr, "exec: %zu node%s: %zu exited 0, %zu failed\n", nodes.size(),
               nodes.size() == 1 ? "" : "s", ok, nodes.size() - ok);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeResult& result = results[i];
    if (result.exit_status == 0) continue;
    std::string why = result.exit_status.has_value()
                          ? absl::StrCat("exit status ", *result.exit_status)
                          : result.error;
    std::fprintf(stderr, "  [%s] %s\n", nodes[i]->name.c_str(), why.c_str());
  }
}

}  // namespace

int RunExecCommand(const JobTarget& target, const ExecOptions& options) {
  OnInterrupt(nullptr);  // signals blocked before any thread starts
  if (options.command.empty()) return Fail("exec", "no command given (see --help)", kExitBadInput);
  absl::StatusOr<ClusterSpec> spec = LoadTarget(target);
  if (!spec.ok()) return FailWith("exec", spec.status());
  absl::StatusOr<std::vector<const NodeSpec*>> nodes = SelectNodes(*spec, options.nodes);
  if (!nodes.ok()) return FailWith("exec", nodes.status());

  std::vector<std::string> env_scripts = EnvScripts(*spec);
  std::string command_line = ShellCommandLine(options.command);
  TransportOptions transport = target.transport;
  transport.read_only = true;  // a node apply would create or start is not there to run on
  absl::Notification cancel;
  OnInterrupt([&cancel] {
    if (!cancel.HasBeenNotified()) cancel.Notify();
  });
  absl::Mutex out_mu;
  std::vector<NodeResult> results(nodes->size());
  std::vector<std::string> outputs(nodes->size());  // --json: each node's, whole
  ParallelFor(nodes->size(), options.parallelism, [&](size_t i) {
    const NodeSpec& node = *(*nodes)[i];
    std::string prefix = absl::StrCat("[", node.name, "] ");
    auto on_line = [&](absl::string_view line) {
      if (target.json) {
        absl::StrAppend(&outputs[i], line, "\n");
        return;
      }
      absl::MutexLock lock(&out_mu);
      std::fprintf(stdout, "%s%.*s\n", prefix.c_str(), static_cast<int>(line.size()),
                   line.data());
      std::fflush(stdout);
    };
    const std::string& env_script = env_scripts[&node - spec->nodes.data()];
    results[i] = RunOnNode(*target.connections, *spec, node, transport, ExecCommand(node, env_script, command_line),
                           on_line, cancel);
  });
  OnInterrupt(nullptr);

  int exit_status = 0;
  for (const NodeResult& result : results) {
    int status = ExitStatusOf(result);
    if (status != 0 && (exit_status == 0 || status < exit_status)) exit_status = status;
  }
  if (cancel.HasBeenNotified()) exit_status = kExitInterrupted;
  if (target.json) {
    PrintJson(options, *nodes, results, outputs, exit_status);
  } else {
    PrintSummary(*nodes, results);
  }
  return exit_status;
}

}  // namespace fleetplan
