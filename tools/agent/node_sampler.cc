#include "tools/agent/node_sampler.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "tools/agent/memory_cgroup.h"
#include "tools/process/files.h"
#include "tools/process/subprocess.h"

namespace fleetplan {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// A figure of nvidia-smi's CSV: nullopt for "[N/A]" and the like.
template <typename T>
std::optional<T> CsvFigure(absl::string_view text) {
  T value;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &value)) return std::nullopt;
  return value;
}

Snapshot Take(const std::string& proc_root) {
  Snapshot snapshot;
  snapshot.at = absl::Now();
  if (absl::StatusOr<std::string> stat = ReadFileToString(proc_root + "/stat"); stat.ok()) {
    snapshot.cpu = ParseCpuTimes(*stat);
  }
  snapshot.processes = ReadProcesses(proc_root);
  return snapshot;
}

}  // namespace

std::optional<CpuTimes> ParseCpuTimes(absl::string_view proc_stat) {
  absl::string_view line = proc_stat.substr(0, proc_stat.find('\n'));
  if (!absl::ConsumePrefix(&line, "cpu ")) return std::nullopt;
  std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
  // user nice system idle iowait irq softirq steal; guest time is in user's.
  if (fields.size() < 4) return std::nullopt;
  CpuTimes times;
  for (size_t i = 0; i < fields.size() && i < 8; ++i) {
    uint64_t value;
    if (!absl::SimpleAtoi(fields[i], &value)) return std::nullopt;
    times.total += value;
    if (i != 3 && i != 4) times.busy += value;
  }
  return times;
}

std::optional<uint64_t> ParseMemoryInUse(absl::string_view meminfo) {
  std::optional<uint64_t> total = MeminfoBytes(meminfo, "MemTotal");
  std::optional<uint64_t> available = MeminfoBytes(meminfo, "MemAvailable");
  if (!total.has_value() || !available.has_value() || *available > *total) return std::nullopt;
  return *total - *available;
}

std::optional<std::vector<GpuFigures>> ParseGpuCsv(absl::string_view csv) {
  std::vector<GpuFigures> gpus;
  for (absl::string_view line : absl::StrSplit(csv, '\n', absl::SkipWhitespace())) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
    std::optional<int> index = fields.size() == 4 ? CsvFigure<int>(fields[0]) : std::nullopt;
    if (!index.has_value() || *index < 0) continue;
    GpuFigures gpu;
    gpu.index = *index;
    if (std::optional<int> util = CsvFigure<int>(fields[1]); util && *util >= 0) {
      gpu.util_percent = *util;
    }
    if (std::optional<uint64_t> used = CsvFigure<uint64_t>(fields[2])) {
      gpu.memory_used_bytes = *used * kMiB;
    }
    if (std::optional<uint64_t> total = CsvFigure<uint64_t>(fields[3])) {
      gpu.memory_total_bytes = *total * kMiB;
    }
    gpus.push_back(gpu);
  }
  if (gpus.empty()) return std::nullopt;
  return gpus;
}

GpuQuery NvidiaSmiQuery(std::string path, absl::Duration timeout) {
  return [path = std::move(path), timeout]() -> std::optional<std::vector<GpuFigures>> {
    SubprocessOptions options;
    options.argv = {"nvidia-smi",
                    "--query-gpu=index,utilization.gpu,memory.used,memory.total",
                    "--format=csv,noheader,nounits"};
    options.env = {{"PATH", path}};
    absl::StatusOr<Completed> done = RunToCompletion(options, timeout);
    if (absl::IsNotFound(done.status())) return std::vector<GpuFigures>{};  // no nvidia-smi
    if (!done.ok() || done->timed_out || done->status != 0) return std::nullopt;
    return ParseGpuCsv(done->output);
  };
}

NodeSample FiguresBetween(const Snapshot& before, const Snapshot& after,
                          const std::vector<pid_t>& roots, long ticks_per_second,
                          long page_size) {
  NodeSample sample;
  if (before.cpu.has_value() && after.cpu.has_value() &&
      after.cpu->total > before.cpu->total && after.cpu->busy >= before.cpu->busy) {
    sample.cpu_percent = 100.0 * static_cast<double>(after.cpu->busy - before.cpu->busy) /
                         static_cast<double>(after.cpu->total - before.cpu->total);
  }
  std::map<pid_t, uint64_t> ticks_before;
  for (const ProcessInfo& process : before.processes) ticks_before[process.pid] = process.cpu_ticks;
  double seconds = absl::ToDoubleSeconds(after.at - before.at);
  for (pid_t root : roots) {
    std::vector<ProcessInfo> tree = ProcessTree(after.processes, root);
    if (tree.empty()) continue;
    uint64_t used = 0;
    TreeFigures figures;
    for (const ProcessInfo& process : tree) {
      auto it = ticks_before.find(process.pid);
      uint64_t start = it == ticks_before.end() ? 0 : it->second;
      if (process.cpu_ticks > start) used += process.cpu_ticks - start;
      figures.rss_bytes += process.rss_pages * static_cast<uint64_t>(page_size);
    }
    if (seconds > 0 && ticks_per_second > 0) {
      figures.cpu_percent = 100.0 * static_cast<double>(used) /
                            (seconds * static_cast<double>(ticks_per_second));
    }
    sample.trees[root] = figures;
  }
  return sample;
}

std::string SnapshotToJson(const Snapshot& snapshot) {
  nlohmann::json processes = nlohmann::json::array();
  for (const ProcessInfo& process : snapshot.processes) {
    processes.push_back({process.pid, process.ppid, process.cpu_ticks});
  }
  nlohmann::json out = {{"at", absl::ToDoubleSeconds(snapshot.at - absl::UnixEpoch())},
                        {"processes", std::move(processes)}};
  if (snapshot.cpu.has_value()) {
    out["busy"] = snapshot.cpu->busy;
    out["total"] = snapshot.cpu->total;
  }
  return out.dump();
}

std::optional<Snapshot> SnapshotFromJson(absl::string_view json) {
  nlohmann::json parsed = nlohmann::json::parse(json, nullptr, false);
  if (!parsed.is_object() || !parsed.contains("at") || !parsed["at"].is_number() ||
      !parsed.contains("processes") || !parsed["processes"].is_array()) {
    return std::nullopt;
  }
  Snapshot snapshot;
  snapshot.at = absl::UnixEpoch() + absl::Seconds(parsed["at"].get<double>());
  if (parsed.contains("busy") && parsed["busy"].is_number_unsigned() && parsed.contains("total") &&
      parsed["total"].is_number_unsigned()) {
    snapshot.cpu = CpuTimes{parsed["busy"].get<uint64_t>(), parsed["total"].get<uint64_t>()};
  }
  for (const nlohmann::json& item : parsed["processes"]) {
    if (!item.is_array() || item.size() != 3 || !item[0].is_number_integer() ||
        !item[1].is_number_integer() || !item[2].is_number_unsigned()) {
      return std::nullopt;
    }
    snapshot.processes.push_back(
        {item[0].get<pid_t>(), item[1].get<pid_t>(), item[2].get<uint64_t>(), 0});
  }
  return snapshot;
}

NodeSample SampleNode(const std::vector<pid_t>& roots, const SamplerOptions& options) {
  absl::Time start = absl::Now();
  bool recent = options.since.has_value() && options.since->at < start &&
                start - options.since->at <= options.since_limit;
  Snapshot before = recent ? *options.since : Take(options.proc_root);
  std::optional<std::vector<GpuFigures>> gpus = std::vector<GpuFigures>{};
  if (options.gpus) gpus = options.gpus();
  absl::Duration left = options.window - (absl::Now() - before.at);
  if (left > absl::ZeroDuration()) absl::SleepFor(left);
  Snapshot after = Take(options.proc_root);
  NodeSample sample =
      FiguresBetween(before, after, roots, sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE));
  sample.gpus = std::move(gpus);
  sample.end = {after.at, after.cpu, {}};
  for (pid_t root : roots) {
    for (const ProcessInfo& process : ProcessTree(after.processes, root)) {
      sample.end.processes.push_back(process);
    }
  }
  if (absl::StatusOr<std::string> meminfo = ReadFileToString(options.proc_root + "/meminfo");
      meminfo.ok()) {
    sample.memory_bytes = ParseMemoryInUse(*meminfo);
  }
  return sample;
}

}  // namespace fleetplan
