#include "tools/agent/progress_watch.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/process/subprocess.h"

namespace fleetplan {
namespace {

// CPU time above this share of one core over a sample is work, below it a
// rank that waits (a timer thread, a heartbeat).
constexpr double kBusyShare = 0.01;

uint64_t TreeTicks(const std::vector<ProcessInfo>& all, pid_t pid) {
  uint64_t ticks = 0;
  for (const ProcessInfo& process : ProcessTree(all, pid)) ticks += process.cpu_ticks;
  return ticks;
}

}  // namespace

GpuUtilization NvidiaSmi(absl::Duration timeout) {
  return [timeout]() -> std::optional<std::vector<int>> {
    SubprocessOptions options;
    options.argv = {"nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"};
    absl::StatusOr<Completed> done = RunToCompletion(options, timeout);
    if (!done.ok() || done->timed_out || done->status != 0) return std::nullopt;
    std::vector<int> busy;
    for (absl::string_view line : absl::StrSplit(done->output, '\n', absl::SkipWhitespace())) {
      int percent;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &percent)) return std::nullopt;
      busy.push_back(percent);
    }
    if (busy.empty()) return std::nullopt;
    return busy;
  };
}

ProgressWatch::ProgressWatch(std::function<std::vector<ProcessInfo>()> processes,
                             GpuUtilization gpus, long ticks_per_second)
    : processes_(std::move(processes)),
      gpus_(std::move(gpus)),
      ticks_per_second_(ticks_per_second > 0 ? ticks_per_second : 100) {
  if (!gpus_) gpu_note_ = "GPU utilization is not watched";
}

bool ProgressWatch::Sample(const std::vector<RankActivity>& ranks, absl::Time now) {
  std::vector<ProcessInfo> all = processes_();
  absl::Duration elapsed = now - last_;
  uint64_t busy_ticks = static_cast<uint64_t>(absl::ToDoubleSeconds(elapsed) *
                                              static_cast<double>(ticks_per_second_) * kBusyShare);
  bool progressed = false;
  for (const RankActivity& rank : ranks) {
    Seen now_seen{rank.pid, rank.output_bytes, TreeTicks(all, rank.pid)};
    auto it = seen_.find(rank.rank);
    if (it != seen_.end() && it->second.pid == rank.pid && last_ != absl::InfinitePast()) {
      const Seen& before = it->second;
      progressed |= now_seen.output_bytes > before.output_bytes;
      progressed |= now_seen.cpu_ticks > before.cpu_ticks + busy_ticks;
    }
    seen_[rank.rank] = now_seen;
  }
  last_ = now;
  if (gpus_) {
    std::optional<std::vector<int>> busy = gpus_();
    if (!busy.has_value()) {
      gpus_ = nullptr;  // asked no more: it did not answer
      gpu_note_ = "GPU utilization is not watched: nvidia-smi did not answer";
    } else {
      for (int percent : *busy) progressed |= percent > 0;
    }
  }
  return progressed;
}

}  // namespace fleetplan
