#ifndef FLEETPLAN_TOOLS_AGENT_NODE_TOP_H_
#define FLEETPLAN_TOOLS_AGENT_NODE_TOP_H_

// `top` on a node (fleetplan-agent top): the node's figures and its
// ranks' in the job's current generation, as one TopReport holding this
// node (tools/protocol/top_report.h). The ranks are job.json's; their CPU
// and memory come from /proc over a short sample (node_sampler.h), how
// long ago each wrote from its log's modification time, its step and rate
// from the progress.json the launch agent keeps (step_progress.h). The
// GPUs are asked of nvidia-smi on the PATH the ranks have (the launch
// agent's), else on this process's. It writes nothing but its sample's end
// (for the next request); the job runs on unharmed.

#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/agent/node_sampler.h"
#include "tools/agent/step_progress.h"
#include "tools/protocol/job_state.h"
#include "tools/protocol/top_report.h"

namespace fleetplan {

struct NodeTopOptions {
  std::string log_dir;  // job.json and the run folders
  std::string node;
  std::string proc_root = "/proc";
  absl::Duration window = absl::Milliseconds(200);
  absl::Duration gpu_timeout = absl::Seconds(5);
};

// Where a request leaves its sample's end for the next one to measure
// CPU use from (node_sampler.h): <log_dir>/top-sample.json.
std::string TopSamplePath(absl::string_view log_dir);

// The node's report; state "none" and no ranks where the node has no job
// (no job.json). CPU use is taken since the last request's sample when it
// is at most a minute old, else over `window`. An error reading or
// parsing job.json is returned.
absl::StatusOr<TopReport> NodeTop(const NodeTopOptions& options);

// fleetplan-agent top: prints NodeTop's report as one line of JSON on
// `out` and returns 0, or says why not on `err` and returns 1 (2 without
// a log folder).
int PrintNodeTop(const NodeTopOptions& options, FILE* out, FILE* err);

// What NodeTop puts together, read beforehand: the job (null: none), the
// sample of the node, the progress record (of any generation), and when
// each rank's log was last written, at `now`.
struct NodeTopInputs {
  std::string node;
  const NodeJobState* job = nullptr;
  NodeSample sample;
  std::optional<ProgressRecord> progress;
  std::map<int, absl::Time> output_at;  // by rank
  absl::Time now;
};
TopReport AssembleNodeTop(const NodeTopInputs& inputs);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_NODE_TOP_H_
