#include "plugins/slurm/slurm_commands.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tools/protocol/agent_command.h"
#include "tools/util/did_you_mean.h"
#include "tools/util/shell_quote.h"

namespace fleetplan {
namespace {

// A task's environment under --export=NONE holds only SLURM_*: what a
// login on the node would have.
constexpr char kNodePath[] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

}  // namespace

std::string AllocationJobName(const ClusterSpec& spec) {
  return absl::StrCat("fleetplan-", spec.name);
}

std::vector<std::string> SbatchArgv(const SlurmSettings& settings, const std::string& job_name,
                                    int count, const std::vector<std::string>& nodelist) {
  // The holder's environment is the node's, not this machine's (its
  // SLURM_CONF, say); its own output is nobody's.
  std::vector<std::string> argv = {"sbatch", "--parsable",
                                   absl::StrCat("--job-name=", job_name),
                                   absl::StrCat("--nodes=", count),
                                   "--ntasks-per-node=1", "--export=NONE", "--chdir=/",
                                   "--output=/dev/null"};
  if (!settings.partition.empty()) argv.push_back(absl::StrCat("--partition=", settings.partition));
  if (!settings.time.empty()) argv.push_back(absl::StrCat("--time=", settings.time));
  if (!settings.account.empty()) argv.push_back(absl::StrCat("--account=", settings.account));
  if (settings.gpus_per_node > 0) {
    argv.push_back(absl::StrCat("--gpus-per-node=", settings.gpus_per_node));
  }
  if (!nodelist.empty()) argv.push_back(absl::StrCat("--nodelist=", absl::StrJoin(nodelist, ",")));
  argv.insert(argv.end(), settings.sbatch.begin(), settings.sbatch.end());
  return argv;
}

std::vector<std::string> SqueueArgv(const std::string& job_name) {
  return {"squeue", "--me", "--noheader", absl::StrCat("--name=", job_name),
          "--format=%i %T %N"};
}

std::string StepScript(const CommandSpec& command) {
  std::string script = absl::StrCat("export PATH=", kNodePath,
                                    "; export HOME=\"$(getent passwd \"$(id -u)\" | cut -d: -f6)\"; ");
  for (const auto& [name, value] : command.env) {
    absl::StrAppend(&script, "export ", name, "=", ShellQuote(value), "; ");
  }
  if (!command.cwd.empty()) absl::StrAppend(&script, "cd ", ShellQuote(command.cwd), " && ");
  absl::StrAppend(&script, "exec /bin/sh -c ", ShellQuote(command.command));
  return script;
}

std::vector<std::string> StepArgv(const std::string& job_id, const std::string& host,
                                  const CommandSpec& command) {
  return {"srun",     absl::StrCat("--jobid=", job_id), absl::StrCat("--nodelist=", host),
          "--nodes=1", "--ntasks=1", "--overlap", "--kill-on-bad-exit=1", "--quiet",
          "--chdir=/", "--export=NONE", "/bin/sh", "-c", StepScript(command)};
}

std::string LaunchDir(const std::string& job_id) {
  return absl::StrCat("/tmp/fleetplan-slurm-", job_id);
}

std::string HolderScript() {
  return absl::StrCat(R"(#!/bin/sh
# fleetplan: holds this allocation and starts, when apply asks, the launch
# agents' job step, which then belongs to the allocation, not to apply.
PATH=)", kNodePath, R"(
export PATH
d=/tmp/fleetplan-slurm-$SLURM_JOB_ID
umask 077
# The folder may be there already: apply's steps write the agents' scripts
# in it, and Slurm may start this script after them.
mkdir -p "$d" && [ -O "$d" ] || exit 1
[ -p "$d/requests" ] || mkfifo "$d/requests" || exit 1
# Held open for writing too: no end-of-file between two requests.
exec 3<>"$d/requests"
while read -r run <&3; do
  case "$run" in '' | *[!A-Za-z0-9._-]*) continue ;; esac
  if [ -f "$d/launch-$run.sh" ]; then
    /bin/sh "$d/launch-$run.sh" </dev/null >"$d/launch-$run.log" 2>&1 &
  fi
done
)");
}

std::string LaunchRequestCommand(const std::string& agent, const std::string& job_id,
                                 const std::string& run_id, absl::Duration wait) {
  AgentSlurmRequest request;
  request.dir = LaunchDir(job_id);
  request.run_id = run_id;
  request.timeout = wait;
  return absl::StrCat("exec ", AgentCommandLine(agent, request));
}

std::string AgentScriptPath(const std::string& job_id, const std::string& run_id,
                            const std::string& host) {
  return absl::StrCat(LaunchDir(job_id), "/agent-", run_id, "-", host, ".sh");
}

std::string AgentReportPath(const std::string& job_id, const std::string& run_id,
                            const std::string& host) {
  return absl::StrCat(LaunchDir(job_id), "/agent-", run_id, "-", host, ".report");
}

std::string AgentStepScript(const std::string& job_id, const std::vector<std::string>& hosts,
                            const std::string& run_id) {
  const size_t count = hosts.size();
  std::vector<std::string> srun = {
      "srun", absl::StrCat("--jobid=", job_id), "--job-name=fleetplan-agents",
      absl::StrCat("--nodelist=", absl::StrJoin(hosts, ",")), absl::StrCat("--nodes=", count),
      absl::StrCat("--ntasks=", count), "--ntasks-per-node=1", "--overlap",
      "--kill-on-bad-exit=1", "--quiet", "--chdir=/", "--export=NONE", "/bin/sh", "-c",
      absl::StrCat("exec /bin/sh ", LaunchDir(job_id), "/agent-", run_id,
                   "-\"$SLURMD_NODENAME\".sh")};
  std::vector<std::string> words;
  for (const std::string& word : srun) words.push_back(ShellQuote(word));
  std::string dir = ShellQuote(LaunchDir(job_id));
  return absl::StrCat("# The launch agents of run ", run_id, ", one job step.\n",
                      "PATH=", kNodePath, "\nexport PATH\nmkdir -p ", dir, "\n",
                      absl::StrJoin(words, " "), "\necho $? >", dir, "/launch-", run_id,
                      ".exit\n");
}

std::string AwaitAgentReportCommand(const std::string& agent, const std::string& job_id,
                                    const std::string& run_id, const std::string& host,
                                    absl::Duration wait) {
  AgentSlurmAwait await;
  await.report = AgentReportPath(job_id, run_id, host);
  await.step_exit = absl::StrCat(LaunchDir(job_id), "/launch-", run_id, ".exit");
  await.step_log = absl::StrCat(LaunchDir(job_id), "/launch-", run_id, ".log");
  await.host = host;
  await.timeout = wait;
  return absl::StrCat("exec ", AgentCommandLine(agent, await));
}

std::vector<std::string> EveryNodeArgv(const std::string& job_id,
                                       const std::vector<std::string>& hosts,
                                       const std::string& command) {
  const size_t count = hosts.size();
  return {"srun", absl::StrCat("--jobid=", job_id),
          absl::StrCat("--nodelist=", absl::StrJoin(hosts, ",")),
          absl::StrCat("--nodes=", count), "--ntasks-per-node=1",
          absl::StrCat("--ntasks=", count), "--overlap", "--quiet", "--label", "--chdir=/",
          "/bin/sh", "-c", command};
}

namespace {

// Expands one item ("prefix[ranges]rest"), appending its hosts to `out`.
bool ExpandItem(absl::string_view item, std::vector<std::string>* out) {
  size_t open = item.find('[');
  if (open == absl::string_view::npos) {
    if (item.empty() || item.find(']') != absl::string_view::npos) return false;
    out->emplace_back(item);
    return true;
  }
  size_t close = item.find(']', open);
  if (close == absl::string_view::npos) return false;
  absl::string_view prefix = item.substr(0, open);
  absl::string_view rest = item.substr(close + 1);
  // What follows the brackets, itself maybe bracketed: "-g[01-02]".
  std::vector<std::string> tails = {""};
  if (!rest.empty()) {
    tails.clear();
    if (!ExpandItem(rest, &tails)) return false;
  }
  for (absl::string_view range : absl::StrSplit(item.substr(open + 1, close - open - 1), ',')) {
    std::vector<absl::string_view> ends = absl::StrSplit(range, absl::MaxSplits('-', 1));
    uint64_t first = 0, last = 0;
    if (!absl::SimpleAtoi(ends[0], &first) ||
        !absl::SimpleAtoi(ends.size() == 2 ? ends[1] : ends[0], &last) || last < first ||
        last - first > 100000) {
      return false;
    }
    const size_t width = ends[0].size();  // "01-10": zero-padded to two digits
    for (uint64_t i = first; i <= last; ++i) {
      std::string number = absl::StrCat(i);
      if (number.size() < width) number.insert(0, width - number.size(), '0');
      for (const std::string& tail : tails) out->push_back(absl::StrCat(prefix, number, tail));
    }
  }
  return true;
}

}  // namespace

std::optional<std::vector<std::string>> ExpandHostlist(absl::string_view hostlist) {
  std::vector<std::string> hosts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= hostlist.size(); ++i) {
    if (i < hostlist.size() && hostlist[i] == '[') ++depth;
    if (i < hostlist.size() && hostlist[i] == ']') --depth;
    if (i == hostlist.size() || (hostlist[i] == ',' && depth == 0)) {
      if (!ExpandItem(hostlist.substr(start, i - start), &hosts)) return std::nullopt;
      start = i + 1;
    }
  }
  if (depth != 0 || hosts.empty()) return std::nullopt;
  return hosts;
}

std::vector<std::string> OutputLines(absl::string_view output) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) lines.emplace_back(line);
  }
  return lines;
}

std::optional<AllocationRow> ParseSqueue(absl::string_view output) {
  for (const std::string& line : OutputLines(output)) {
    std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() < 2) continue;
    AllocationRow row{fields[0], fields[1], fields.size() > 2 ? fields[2] : ""};
    return row;
  }
  return std::nullopt;
}

std::vector<PartitionRow> ParseSinfo(absl::string_view output) {
  std::vector<PartitionRow> rows;
  for (const std::string& line : OutputLines(output)) {
    std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() < 2) continue;
    PartitionRow row;
    row.name = fields[0];
    if (!row.name.empty() && row.name.back() == '*') {
      row.name.pop_back();
      row.is_default = true;
    }
    if (!absl::SimpleAtoi(fields[1], &row.nodes)) continue;
    // Gres: "gpu:8", "gpu:a100:8", "gpu:a100:8(S:0-1)", several comma-separated.
    for (absl::string_view gres : absl::StrSplit(fields.size() > 2 ? fields[2] : "", ',')) {
      if (!absl::StartsWith(gres, "gpu:")) continue;
      gres = gres.substr(0, gres.find('('));
      absl::string_view count = gres.substr(gres.rfind(':') + 1);
      int gpus = 0;
      if (absl::SimpleAtoi(count, &gpus)) row.gpus_per_node = std::max(row.gpus_per_node, gpus);
    }
    // A partition appears once per distinct node configuration: add them up.
    bool merged = false;
    for (PartitionRow& seen : rows) {
      if (seen.name != row.name) continue;
      seen.nodes += row.nodes;
      seen.gpus_per_node = std::max(seen.gpus_per_node, row.gpus_per_node);
      merged = true;
    }
    if (!merged) rows.push_back(row);
  }
  return rows;
}

absl::Status CheckPartition(const std::vector<PartitionRow>& partitions,
                            const SlurmSettings& settings, int count) {
  const PartitionRow* found = nullptr;
  std::vector<std::string> names;
  for (const PartitionRow& row : partitions) {
    names.push_back(row.name);
    if (settings.partition.empty() ? row.is_default : row.name == settings.partition) found = &row;
  }
  if (found == nullptr) {
    if (settings.partition.empty()) {
      return absl::FailedPreconditionError(
          "the cluster has no default partition: set [slurm] partition");
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "partition \"", settings.partition, "\" does not exist (partitions: ",
        names.empty() ? "none" : absl::StrJoin(names, ", "), ")",
        DidYouMean(settings.partition, names)));
  }
  if (found->nodes < count) {
    return absl::FailedPreconditionError(absl::StrCat("partition \"", found->name, "\" has ",
                                                      found->nodes, " nodes; the spec needs ",
                                                      count));
  }
  if (settings.gpus_per_node > found->gpus_per_node) {
    return absl::FailedPreconditionError(absl::StrCat(
        "partition \"", found->name, "\" has ", found->gpus_per_node,
        " GPUs per node (sinfo's gres); [slurm] gpus_per_node asks for ", settings.gpus_per_node));
  }
  return absl::OkStatus();
}

}  // namespace fleetplan
