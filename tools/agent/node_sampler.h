#ifndef FLEETPLAN_TOOLS_AGENT_NODE_SAMPLER_H_
#define FLEETPLAN_TOOLS_AGENT_NODE_SAMPLER_H_

// A node's figures for `top`, taken by the agent on the node: its CPU over
// a short window (/proc/stat), its memory in use (/proc/meminfo), each
// rank's processes' CPU and resident memory (/proc/PID/stat, the rank and
// everything it started), and its GPUs (nvidia-smi's CSV, read here and
// only here). Nothing is written and nothing kept between calls.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/agent/process_tree.h"
#include "tools/protocol/top_report.h"

namespace fleetplan {

// The machine's CPU time, in clock ticks: busy and in all.
struct CpuTimes {
  uint64_t busy = 0;
  uint64_t total = 0;
};

// /proc/stat's first line ("cpu  user nice system idle iowait irq softirq
// steal ..."): all of it but idle and iowait is busy. nullopt when the text
// has no such line.
std::optional<CpuTimes> ParseCpuTimes(absl::string_view proc_stat);

// /proc/meminfo's MemTotal less MemAvailable, in bytes; nullopt when
// either is missing.
std::optional<uint64_t> ParseMemoryInUse(absl::string_view meminfo);

// The output of `nvidia-smi --query-gpu=index,utilization.gpu,memory.used,
// memory.total --format=csv,noheader,nounits`: a GPU per line, memory in
// MiB; a figure the GPU does not report ("[N/A]", "[Not Supported]") is
// unknown. Lines that are no GPU's (a warning) are passed by; nullopt when
// none is.
std::optional<std::vector<GpuFigures>> ParseGpuCsv(absl::string_view csv);

// Asks for the node's GPUs: an empty list where there is no GPU to ask
// about, nullopt where the answer is unknown.
using GpuQuery = std::function<std::optional<std::vector<GpuFigures>>()>;

// nvidia-smi found on `path` (a PATH value) and asked as above: an empty
// list where it is not found there, nullopt where it fails, is killed
// after `timeout`, or prints no GPU.
GpuQuery NvidiaSmiQuery(std::string path, absl::Duration timeout = absl::Seconds(5));

// The processes of the machine and its CPU times, at one moment.
struct Snapshot {
  absl::Time at;
  std::optional<CpuTimes> cpu;
  std::vector<ProcessInfo> processes;
};

// One rank's processes over the sample.
struct TreeFigures {
  double cpu_percent = 0;  // of one core
  uint64_t rss_bytes = 0;
};

struct NodeSample {
  std::optional<double> cpu_percent;  // of all cores
  std::optional<uint64_t> memory_bytes;
  std::optional<std::vector<GpuFigures>> gpus = std::vector<GpuFigures>{};
  // By the rank's pid; a pid not running at the end is absent.
  std::map<pid_t, TreeFigures> trees;
  // Where the sample ended: the node's CPU times and the processes of
  // the ranks' trees, for the next sample to start from.
  Snapshot end;
};

// A snapshot as the next sample reads it: {"at" (Unix seconds), "busy",
// "total", "processes": [[pid, ppid, ticks], ...]}.
std::string SnapshotToJson(const Snapshot& snapshot);
// nullopt for anything that is not SnapshotToJson's.
std::optional<Snapshot> SnapshotFromJson(absl::string_view json);

// The figures between two snapshots: the node's CPU, and for each of
// `roots`, the CPU its tree used (each process's ticks at the end less
// those it had at the start, when it was there) and its resident memory
// at the end. `ticks_per_second` is sysconf(_SC_CLK_TCK), `page_size`
// sysconf(_SC_PAGESIZE).
NodeSample FiguresBetween(const Snapshot& before, const Snapshot& after,
                          const std::vector<pid_t>& roots, long ticks_per_second,
                          long page_size);

struct SamplerOptions {
  std::string proc_root = "/proc";
  GpuQuery gpus;  // empty: no GPUs looked for
  // How long CPU use is taken over at least; the GPU query runs meanwhile.
  absl::Duration window = absl::Milliseconds(200);
  // Where the last sample ended (NodeSample::end): CPU use is taken from
  // there, as top(1) takes it over its refresh interval, when it is at
  // most `since_limit` old.
  std::optional<Snapshot> since;
  absl::Duration since_limit = absl::Minutes(1);
};

// Samples the node and the trees of `roots` from `options.since`, else
// over `options.window` from now.
NodeSample SampleNode(const std::vector<pid_t>& roots, const SamplerOptions& options);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_NODE_SAMPLER_H_
