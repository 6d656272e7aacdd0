// Cost of compiling and rendering plans for growing clusters: for 10 to
// 10,000 nodes, CompilePlan + RenderPlanJson wall and CPU time per run, and
// the growth of peak RSS. The target is under 50 ms at 1,000 nodes, with cost
// linear in the node count.
//
//   bazel run -c opt //bench:plan_bench

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/plan/compile.h"
#include "tools/plan/render.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {
namespace {

// A spec shaped like the Lambda seed, scaled out: two ssh groups, two GPUs
// and two ranks per node, keys, sync, a Bazel label to build.
ClusterSpec MakeSpec(int nodes) {
  ClusterSpec spec;
  spec.name = absl::StrCat("bench-", nodes);
  spec.spec_path = absl::StrCat("/specs/bench-", nodes, ".toml");
  for (int i = 0; i < 2; ++i) {
    SshGroup& group = spec.ssh_groups.emplace_back();
    group.name = absl::StrCat("group", i);
    group.user = "ubuntu";
    group.key_file = "~/.ssh/cluster.pem";
    group.env = {{"LD_LIBRARY_PATH", "$LD_LIBRARY_PATH:/usr/local/cuda/lib64"}};
  }
  spec.nodes.reserve(nodes);
  for (int i = 0; i < nodes; ++i) {
    NodeSpec& node = spec.nodes.emplace_back();
    node.name = absl::StrCat("node", i);
    node.address = absl::StrCat("10.", i / 65536, ".", (i / 256) % 256, ".", i % 256);
    node.transport = "ssh";
    node.workdir = "/home/ubuntu/project";
    node.ssh_group = absl::StrCat("group", i % 2);
    node.python.kind = PythonEnv::Kind::kVenv;
    node.python.venv = "/home/ubuntu/venvs/train";
    node.gpus = {0, 1};
    node.nproc = 2;
    node.index = i;
  }
  spec.nodes.front().chief = true;
  spec.keys.distribute = true;
  spec.sync.enabled = true;
  spec.sync.source = "/home/me/project";
  spec.sync.exclude = {".git", "bazel-*", "*.pt"};
  spec.env = {{"NCCL_DEBUG", "INFO"}};
  spec.network.nccl_socket_ifname = "auto";
  spec.network.ib = false;
  spec.job.program = "//trainer:train";
  spec.job.args = {"--backend=nccl", "--dataset=fashion-mnist", "--epochs=2"};
  return spec;
}

double CpuMs() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
}

long PeakRssKb() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// One compile and render; returns the JSON's size so the work is kept.
size_t CompileAndRender(const ClusterSpec& spec) {
  absl::StatusOr<Plan> plan = CompilePlan(spec, {"0123456789abcdef0123456789abcdef"});
  if (!plan.ok()) {
    std::fprintf(stderr, "compile failed: %s\n", plan.status().ToString().c_str());
    std::exit(1);
  }
  return RenderPlanJson(*plan).size();
}

// Wall milliseconds of compile alone and of RenderPlanJson alone.
void Breakdown(const ClusterSpec& spec, double* compile_ms, double* render_ms) {
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  auto t0 = Clock::now();
  absl::StatusOr<Plan> plan = CompilePlan(spec, {});
  auto t1 = Clock::now();
  std::string json = RenderPlanJson(*plan);
  auto t2 = Clock::now();
  *compile_ms = ms(t0, t1);
  *render_ms = ms(t1, t2);
}

int Main() {
  std::printf("%8s %8s %10s %10s %10s %12s %12s\n", "nodes", "runs", "wall ms",
              "CPU ms", "us/node", "RSS +MiB", "JSON MiB");
  for (int nodes : {10, 100, 1000, 10000}) {
    ClusterSpec spec = MakeSpec(nodes);
    // The first run alone sets this size's peak RSS growth.
    long rss_before = PeakRssKb();
    size_t json_bytes = CompileAndRender(spec);
    long rss_delta = PeakRssKb() - rss_before;
    const int runs = std::max(3, 20000 / nodes);
    double cpu_start = CpuMs();
    auto wall_start = std::chrono::steady_clock::now();
    for (int i = 0; i < runs; ++i) json_bytes = CompileAndRender(spec);
    double wall = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - wall_start)
                      .count() / runs;
    double cpu = (CpuMs() - cpu_start) / runs;
    std::printf("%8d %8d %10.2f %10.2f %10.1f %12.1f %12.2f\n", nodes, runs, wall,
                cpu, wall * 1e3 / nodes, rss_delta / 1024.0,
                json_bytes / (1024.0 * 1024.0));
    double compile_ms, render_ms;
    Breakdown(spec, &compile_ms, &render_ms);
    std::printf("%8s one run: CompilePlan %.2f ms, RenderPlanJson %.2f ms\n", "",
                compile_ms, render_ms);
  }
  return 0;
}

}  // namespace
}  // namespace fleetplan

int main() { return fleetplan::Main(); }
