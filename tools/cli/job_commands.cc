#include "tools/cli/job_commands.h"

#include <unistd.h>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "tools/apply/executor.h"
#include "tools/apply/job_control.h"
#include "tools/cli/membership_view.h"
#include "tools/cli/signals.h"
#include "tools/cli/spec_lock.h"
#include "tools/protocol/job_state.h"
#include "tools/protocol/metric_line.h"
#include "tools/protocol/rank_error.h"
#include "tools/protocol/stack_report.h"
#include "tools/util/flags.h"

namespace fleetplan {
namespace {

std::string Ago(absl::Time then, absl::Time now) {
  if (then == absl::InfinitePast()) return "-";
  absl::Duration ago = absl::Trunc(now - then, absl::Seconds(1));
  if (ago <= absl::ZeroDuration()) return "just now";
  return absl::StrCat(absl::FormatDuration(ago), " ago");
}

std::string TimeText(absl::Time time) {
  if (time == absl::InfinitePast()) return "";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", time, absl::UTCTimeZone());
}

// What `status` says of one node.
struct NodeStatus {
  std::string node;
  // none, a JobPhase name, "lost", "unreadable", "unreachable", or
  // (running, no rank of this node) "spare" or "rejoining"
  std::string state = "none";
  std::string error;  // why unreadable or unreachable
  std::optional<NodeJobState> job;
  int ranks_alive = 0;
  std::map<int, int> exit_statuses;
};

NodeStatus Summarize(const NodeSpec& node, const absl::StatusOr<std::optional<NodeJobState>>& read,
                     const NodeConnections& connections, absl::Time now) {
  NodeStatus status;
  status.node = node.name;
  if (connections.not_there.count(node.name) > 0) return status;
  if (auto unreachable = connections.unreachable.find(node.name);
      unreachable != connections.unreachable.end()) {
    status.state = "unreachable";
    status.error = unreachable->second;
    return status;
  }
  if (!read.ok()) {
    status.state = "unreadable";
    status.error = std::string(read.status().message());
    return status;
  }
  if (!read->has_value()) return status;
  status.job = **read;
  const NodeJobState& job = *status.job;
  status.state = IsStale(job, now) ? "lost" : std::string(JobPhaseName(job.phase));
  // A spare in reserve, or a node trying to rejoin: no rank, yet no failure.
  if (status.state == "running" && !job.waiting.empty()) status.state = job.waiting;
  for (const RankState& rank : job.ranks) {
    if (rank.status.has_value()) {
      status.exit_statuses[rank.rank] = *rank.status;
    } else if (rank.pid > 0 && !IsFinal(job.phase) && status.state != "lost") {
      ++status.ranks_alive;
    }
  }
  return status;
}

// The job's overall state, from the coordinator's view: none, running,
// succeeded, failed or stopped; unknown when the chief cannot be read.
std::string OverallState(const NodeStatus& chief) {
  if (chief.state == "unreadable" || chief.state == "unreachable") return "unknown";
  if (!chief.job.has_value()) return "none";
  if (chief.state == "lost") return "failed";  // its agent died without a word
  if (chief.job->phase == JobPhase::kStarting) return "running";
  return std::string(JobPhaseName(chief.job->phase));
}

nlohmann::json NodeJson(const NodeStatus& status, absl::Time now) {
  nlohmann::json node = {{"node", status.node}, {"state", status.state}};
  if (!status.error.empty()) node["error"] = status.error;
  if (!status.job.has_value()) return node;
  const NodeJobState& job = *status.job;
  nlohmann::json exits = nlohmann::json::object();
  for (const auto& [rank, code] : status.exit_statuses) exits[absl::StrCat(rank)] = code;
  node["run_id"] = job.run_id;
  node["coordinator"] = job.coordinator;
  node["generation"] = job.generation;
  node["ranks"] = job.ranks.size();
  node["ranks_alive"] = status.ranks_alive;
  if (!job.waiting.empty()) node["waiting"] = job.waiting;
  node["exit_statuses"] = exits;
  node["last_heartbeat"] = TimeText(job.last_heartbeat);
  node["last_heartbeat_age_s"] =
      job.last_heartbeat == absl::InfinitePast()
          ? nlohmann::json(nullptr)
          : nlohmann::json(absl::ToDoubleSeconds(now - job.last_heartbeat));
  return node;
}

// `status --json`'s "failure": who failed and how, and, where the rank
// said, its exception (type, message, file, line, function) or last lines.
nlohmann::json FailureJson(const JobFailure& failure) {
  nlohmann::json out = {{"node", failure.node},
                        {"rank", failure.rank >= 0 ? nlohmann::json(failure.rank) : nullptr},
                        {"exit_status", failure.status},
                        {"reason", failure.reason},
                        {"summary", DescribeFailure(failure)}};
  if (failure.error.has_value()) out.update(RankErrorToJson(*failure.error));
  if (failure.stacks.has_value()) {
    out["stacks"] = StackSummaryToJson(*failure.stacks);
    out["stacks"]["lines"] = SummaryLines(*failure.stacks);
  }
  return out;
}

std::string ExitText(const std::map<int, int>& statuses) {
  if (statuses.empty()) return "-";
  std::vector<std::string> parts;
  for (const auto& [rank, code] : statuses) parts.push_back(absl::StrCat(rank, ":", code));
  return absl::StrJoin(parts, ",");
}

// `logs --json`: one object per line, {"node", "rank", "line"}, from the
// agent's "[node/rank] text" (rank null for a line of the agent itself).
std::string LogLineJson(const NodeSpec& node, absl::string_view line) {
  LogLine split = SplitLogLine(node.name, line);
  nlohmann::json out = {{"node", node.name},
                        {"rank", split.rank.has_value() ? nlohmann::json(*split.rank) : nullptr},
                        {"line", std::string(split.text)}};
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

LogLine SplitLogLine(absl::string_view node, absl::string_view line) {
  std::string prefix = absl::StrCat("[", node, "/");
  size_t close = line.find("] ");
  int rank;
  if (absl::StartsWith(line, prefix) && close != absl::string_view::npos &&
      absl::SimpleAtoi(line.substr(prefix.size(), close - prefix.size()), &rank)) {
    return {rank, line.substr(close + 2)};
  }
  return {std::nullopt, line};
}

int RunStatusCommand(const JobTarget& target) {
  absl::StatusOr<std::unique_ptr<OpenedTarget>> opened = OpenTarget(target);
  if (!opened.ok()) return FailWith("status", opened.status());
  const ClusterSpec& spec = (*opened)->spec;
  JobControl control(spec, (*opened)->connections.open);
  absl::Time now = absl::Now();
  std::vector<NodeStatus> nodes;
  std::vector<absl::StatusOr<std::optional<NodeJobState>>> states = control.ReadStates();
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    nodes.push_back(Summarize(spec.nodes[i], states[i], (*opened)->connections, now));
  }
  const NodeStatus& chief = nodes[&spec.chief() - spec.nodes.data()];
  std::string overall = OverallState(chief);
  // The job's own state is the chief's: a worker out of reach is marked,
  // not a failure to answer; one reached but unreadable is.
  bool chief_unknown = overall == "unknown";
  bool unreadable = chief_unknown;
  for (const NodeStatus& node : nodes) unreadable |= node.state == "unreadable";
  const std::optional<NodeJobState>& job = chief.job;
  if (target.json) {
    nlohmann::json out = {{"state", overall},
                          {"run_id", job.has_value() ? job->run_id : ""},
                          {"generation", job.has_value() ? job->generation : 0},
                          {"max_restarts", job.has_value() ? job->max_restarts : 0},
                          {"nodes", nlohmann::json::array()}};
    if (job.has_value()) {
      out["started_at"] = TimeText(job->started_at);
      out["ended_at"] = TimeText(job->ended_at);
      out["exit_status"] = job->exit_status;
      if (job->failure.has_value()) out["failure"] = FailureJson(*job->failure);
      if (spec.Elastic()) out["membership"] = MembershipJson(*job);
    }
    for (const NodeStatus& node : nodes) out["nodes"].push_back(NodeJson(node, now));
    std::printf("%s\n", out.dump(2).c_str());
    return unreadable ? kExitApplyFailed : 0;
  }
  std::printf("%-16s %-10s %-4s %-6s %-14s %s\n", "node", "state", "gen", "alive", "exit",
              "last heartbeat");
  for (const NodeStatus& node : nodes) {
    if (!node.job.has_value()) {
      std::printf("%-16s %-10s %s\n", node.node.c_str(), node.state.c_str(),
                  node.error.empty() ? "" : node.error.c_str());
      continue;
    }
    std::printf("%-16s %-10s %-4d %-6s %-14s %s\n", node.node.c_str(), node.state.c_str(),
                node.job->generation,
                absl::StrCat(node.ranks_alive, "/", node.job->ranks.size()).c_str(),
                ExitText(node.exit_statuses).c_str(),
                Ago(node.job->last_heartbeat, now).c_str());
  }
  if (chief_unknown) {
    std::printf("job: unknown (its chief, %s, is %s)\n", chief.node.c_str(), chief.state.c_str());
  } else if (!job.has_value()) {
    std::printf("job: none (no run of this spec on its chief)\n");
  } else {
    std::string line = absl::StrCat("job: ", overall, " (run ", job->run_id, ", generation ",
                                     job->generation, ", restarts used ", job->restarts_used,
                                     " of ", job->max_restarts, ")");
    if (chief.state == "lost") {
      absl::StrAppend(&line, "; the coordinator's agent stopped writing its state ",
                      Ago(job->updated_at, now));
    }
    if (job->failure.has_value()) {
      absl::StrAppend(&line, ": ", DescribeFailureInFull(*job->failure));
    }
    std::printf("%s\n", line.c_str());
    if (spec.Elastic()) {
      for (const std::string& text : MembershipLines(*job, absl::LocalTimeZone())) {
        std::printf("%s\n", text.c_str());
      }
    }
  }
  return unreadable ? kExitApplyFailed : 0;
}

int RunLogsCommand(const JobTarget& target, const LogsCommandOptions& options) {
  OnInterrupt(nullptr);  // signals blocked before any thread starts
  absl::StatusOr<std::unique_ptr<OpenedTarget>> opened = OpenTarget(target);
  if (!opened.ok()) return FailWith("logs", opened.status());
  const ClusterSpec& spec = (*opened)->spec;
  absl::StatusOr<std::vector<const NodeSpec*>> selected = SelectNodes(spec, options.nodes);
  if (!selected.ok()) return FailWith("logs", selected.status());
  std::vector<const NodeSpec*> nodes;
  const NodeConnections& connections = (*opened)->connections;
  bool named_unreachable = false;
  for (const NodeSpec* node : *selected) {
    // One out of reach is said and left out; the others' logs are printed.
    if (auto unreachable = connections.unreachable.find(node->name);
        unreachable != connections.unreachable.end()) {
      Fail("logs", absl::StrCat("node '", node->name, "' is unreachable: ", unreachable->second),
           0);
      named_unreachable |= !options.nodes.empty();
      continue;
    }
    // Unnamed, a node that is not there is left out: it has no logs.
    if (!options.nodes.empty() || connections.open.count(node->name) > 0) {
      nodes.push_back(node);
    }
  }
  LogsRequest request;
  request.run_id = options.run_id;
  request.rank = options.rank;
  request.tail = options.tail;
  request.follow = options.follow;
  // Following: lines as they come, merged. Otherwise each node's in turn.
  absl::Mutex out_mu;
  std::map<std::string, std::string> held;
  // Ctrl-C, or (following) the end of the job as JobControl::Follow sees it.
  absl::Notification stop;
  absl::Mutex stop_mu;
  bool interrupted = false;
  auto stop_all = [&] {
    absl::MutexLock lock(&stop_mu);
    if (!stop.HasBeenNotified()) stop.Notify();
  };
  OnInterrupt([&] {
    {
      absl::MutexLock lock(&stop_mu);
      interrupted = true;
    }
    stop_all();
  });
  JobControl control(spec, (*opened)->connections.open);
  JobControl::LogsCallbacks callbacks;
  callbacks.on_line = [&](const NodeSpec& node, absl::string_view line) {
    std::optional<std::string> readable =
        options.human && !target.json ? HumanMetricLine(line) : std::nullopt;
    std::string out = target.json       ? LogLineJson(node, line)
                      : readable ? *std::move(readable)
                                        : std::string(line);
    absl::MutexLock lock(&out_mu);
    if (options.follow) {
      std::fprintf(stdout, "%s\n", out.c_str());
      std::fflush(stdout);
    } else {
      absl::StrAppend(&held[node.name], out, "\n");
    }
  };
  callbacks.cancel_for = [&stop](const NodeSpec&) { return &stop; };
  JobControl::Followed followed;
  if (options.follow) {
    followed = control.Follow(request, nodes, callbacks, stop_all);
  } else {
    followed.results = control.Logs(request, nodes, callbacks);
  }
  const std::vector<absl::StatusOr<int>>& results = followed.results;
  OnInterrupt(nullptr);
  for (const NodeSpec* node : nodes) std::fputs(held[node->name].c_str(), stdout);
  {
    absl::MutexLock lock(&stop_mu);
    if (interrupted) return kExitInterrupted;
  }
  // The chief followed to the job's end: its status is the job's, whatever
  // became of the others' streams.
  if (followed.chief_to_the_end) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i] == &spec.chief()) return *results[i];
    }
  }
  int code = named_unreachable ? kExitApplyFailed : 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!results[i].ok()) {
      Fail("logs", absl::StrCat("node '", nodes[i]->name, "': ", results[i].status().message()),
           0);
      code = kExitApplyFailed;
    } else if (*results[i] != 0 && code == 0) {
      // Following: the job's status; else the agent could not read.
      code = options.follow ? *results[i] : kExitApplyFailed;
    }
  }
  return code;
}

StopOutcome StopJob(const OpenedTarget& opened, absl::Duration lock_timeout) {
  const ClusterSpec& spec = opened.spec;
  StopOutcome outcome;
  // Not while an apply writes the records and starts the job.
  absl::StatusOr<std::unique_ptr<HeldSpecLock>> lock =
      LockSpec(spec, opened.connections.open, lock_timeout);
  if (!lock.ok()) {
    outcome.status = lock.status();
    outcome.locked = true;
    return outcome;
  }
  for (const auto& [node, why] : opened.connections.not_there) {
    outcome.said[node] = absl::StrCat("nothing running (", why, ")");  // not there: runs nothing
  }
  absl::Mutex said_mu;
  outcome.status = JobControl(spec, opened.connections.open)
                       .Stop([&](const NodeSpec& node, absl::string_view line) {
                         absl::MutexLock hold(&said_mu);
                         std::string& said = outcome.said[node.name];
                         absl::StrAppend(&said, said.empty() ? "" : "; ", line);
                       });
  // What holds the nodes goes with the job (a Slurm allocation is cancelled).
  if (outcome.status.ok()) outcome.status = ReleaseSpec(spec);
  return outcome;
}

nlohmann::json StopJson(const ClusterSpec& spec, const StopOutcome& outcome) {
  nlohmann::json out = {{"stopped", outcome.status.ok()}, {"nodes", nlohmann::json::array()}};
  if (!outcome.locked) {
    for (const NodeSpec& node : spec.nodes) {
      auto said = outcome.said.find(node.name);
      out["nodes"].push_back(
          {{"node", node.name}, {"said", said == outcome.said.end() ? "" : said->second}});
    }
  }
  if (!outcome.status.ok()) out["error"] = std::string(outcome.status.message());
  return out;
}

int RunStopCommand(const JobTarget& target) {
  absl::StatusOr<std::unique_ptr<OpenedTarget>> opened = OpenTarget(target);
  if (!opened.ok()) return FailWith("stop", opened.status());
  const ClusterSpec& spec = (*opened)->spec;
  StopOutcome outcome = StopJob(**opened, target.lock_timeout);
  int failed = outcome.locked ? LockExitCode(outcome.status) : kExitApplyFailed;
  if (target.json) {
    std::printf("%s\n", StopJson(spec, outcome).dump(2).c_str());
    return outcome.status.ok() ? 0 : failed;
  }
  for (const NodeSpec& node : spec.nodes) {
    auto said = outcome.said.find(node.name);
    if (said != outcome.said.end() && !said->second.empty()) {
      std::printf("[%s] %s\n", node.name.c_str(), said->second.c_str());
    }
  }
  if (!outcome.status.ok()) return Fail("stop", outcome.status.message(), failed);
  std::printf("stop complete: no process of the job is left on any of the %zu nodes\n",
              (*opened)->connections.open.size());
  return 0;
}

}  // namespace fleetplan
