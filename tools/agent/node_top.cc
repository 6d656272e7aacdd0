#include "tools/agent/node_top.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tools/process/files.h"

namespace fleetplan {
namespace {

constexpr char kDefaultPath[] = "/usr/local/bin:/usr/bin:/bin";

// The PATH in /proc/PID/environ: what the process started with.
std::optional<std::string> PathOf(const std::string& proc_root, int pid) {
  absl::StatusOr<std::string> environ =
      ReadFileToString(absl::StrCat(proc_root, "/", pid, "/environ"));
  if (!environ.ok()) return std::nullopt;
  for (absl::string_view entry : absl::StrSplit(*environ, '\0')) {
    if (absl::ConsumePrefix(&entry, "PATH=")) return std::string(entry);
  }
  return std::nullopt;
}

// Where nvidia-smi is looked for: on the ranks' PATH while the job runs
// (env.sh may put a CUDA folder there), else on this command's.
std::string GpuSearchPath(const NodeJobState* job, const std::string& proc_root) {
  if (job != nullptr && !IsFinal(job->phase) && job->agent_pid > 0) {
    if (std::optional<std::string> path = PathOf(proc_root, job->agent_pid)) return *path;
  }
  const char* own = std::getenv("PATH");
  return own != nullptr ? own : kDefaultPath;
}

RankRunState StateOf(const RankState& rank, const NodeSample& sample) {
  if (rank.status.has_value()) {
    return *rank.status == 0 ? RankRunState::kExited : RankRunState::kFailed;
  }
  if (rank.pid <= 0) return RankRunState::kNotStarted;
  return sample.trees.count(rank.pid) > 0 ? RankRunState::kRunning : RankRunState::kGone;
}

const RankSteps* StepsOf(const std::optional<ProgressRecord>& progress, int generation,
                         int rank) {
  if (!progress.has_value() || progress->generation != generation) return nullptr;
  for (const RankSteps& steps : progress->ranks) {
    if (steps.rank == rank) return &steps;
  }
  return nullptr;
}

RankFigures RankOf(const NodeTopInputs& inputs, size_t local_rank) {
  const RankState& state = inputs.job->ranks[local_rank];
  RankFigures rank;
  rank.rank = state.rank;
  rank.local_rank = static_cast<int>(local_rank);
  rank.pid = state.pid;
  rank.state = StateOf(state, inputs.sample);
  if (auto tree = inputs.sample.trees.find(state.pid);
      rank.state == RankRunState::kRunning && tree != inputs.sample.trees.end()) {
    rank.cpu_percent = tree->second.cpu_percent;
    rank.rss_bytes = tree->second.rss_bytes;
  }
  if (auto wrote = inputs.output_at.find(state.rank); wrote != inputs.output_at.end()) {
    rank.last_output_age_s =
        std::max(0.0, absl::ToDoubleSeconds(inputs.now - wrote->second));
  }
  if (const RankSteps* steps = StepsOf(inputs.progress, inputs.job->generation, state.rank);
      steps != nullptr && !steps->points.empty()) {
    rank.step = steps->points.back().step;
    rank.steps_per_s = StepRate(steps->points, inputs.progress->written);
  }
  return rank;
}

}  // namespace

std::string TopSamplePath(absl::string_view log_dir) {
  return absl::StrCat(log_dir, "/top-sample.json");
}

TopReport AssembleNodeTop(const NodeTopInputs& inputs) {
  TopReport report;
  NodeFigures node;
  node.name = inputs.node;
  node.cpu_percent = inputs.sample.cpu_percent;
  node.memory_bytes = inputs.sample.memory_bytes;
  node.gpus = inputs.sample.gpus;
  if (inputs.job != nullptr) {
    const NodeJobState& job = *inputs.job;
    report.state = IsStale(job, inputs.now) ? "lost" : std::string(JobPhaseName(job.phase));
    report.run_id = job.run_id;
    report.generation = job.generation;
    for (size_t i = 0; i < job.ranks.size(); ++i) node.ranks.push_back(RankOf(inputs, i));
  }
  report.nodes.push_back(std::move(node));
  return report;
}

absl::StatusOr<TopReport> NodeTop(const NodeTopOptions& options) {
  std::optional<NodeJobState> job;
  absl::StatusOr<std::string> json = ReadFileToString(JobStatePath(options.log_dir));
  if (json.ok()) {
    absl::StatusOr<NodeJobState> parsed = JobStateFromJson(*json);
    if (!parsed.ok()) return parsed.status();
    job = *std::move(parsed);
  } else if (!absl::IsNotFound(json.status())) {
    return json.status();
  }
  NodeTopInputs inputs;
  inputs.node = options.node;
  inputs.job = job.has_value() ? &*job : nullptr;
  std::vector<pid_t> roots;
  if (job.has_value()) {
    for (const RankState& rank : job->ranks) {
      if (rank.pid > 0 && !rank.status.has_value()) roots.push_back(rank.pid);
    }
  }
  SamplerOptions sampler;
  sampler.proc_root = options.proc_root;
  sampler.window = options.window;
  sampler.gpus = NvidiaSmiQuery(GpuSearchPath(inputs.job, options.proc_root),
                                options.gpu_timeout);
  // CPU use since the last request's sample, as top(1) takes it over its
  // refresh interval; the next request starts from this one's.
  std::string since = TopSamplePath(options.log_dir);
  if (absl::StatusOr<std::string> text = ReadFileToString(since); text.ok()) {
    sampler.since = SnapshotFromJson(*text);
  }
  inputs.sample = SampleNode(roots, sampler);
  WriteFileAtomic(since, SnapshotToJson(inputs.sample.end), 0600).IgnoreError();
  if (job.has_value()) {
    std::string run_dir = RunDir(options.log_dir, job->run_id);
    if (absl::StatusOr<std::string> text = ReadFileToString(ProgressPath(run_dir)); text.ok()) {
      absl::StatusOr<ProgressRecord> record = ProgressRecordFromJson(*text);
      if (record.ok()) inputs.progress = *std::move(record);
    }
    for (const RankState& rank : job->ranks) {
      struct stat info;
      if (stat(RankLogPath(run_dir, rank.rank).c_str(), &info) == 0) {
        inputs.output_at[rank.rank] = absl::TimeFromTimespec(info.st_mtim);
      }
    }
  }
  inputs.now = absl::Now();
  return AssembleNodeTop(inputs);
}

int PrintNodeTop(const NodeTopOptions& options, FILE* out, FILE* err) {
  if (options.log_dir.empty()) {
    std::fprintf(err, "fleetplan-agent: top needs --log-dir\n");
    return 2;
  }
  absl::StatusOr<TopReport> report = NodeTop(options);
  if (!report.ok()) {
    std::fprintf(err, "fleetplan-agent: %s\n", std::string(report.status().message()).c_str());
    return 1;
  }
  std::fprintf(out, "%s\n", TopReportToJson(*report).c_str());
  return 0;
}

}  // namespace fleetplan
