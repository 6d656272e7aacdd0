// Cost of planning growing clusters, 10 to 10,000 nodes, along two paths:
//
//   compile+render        CompilePlan + RenderPlanJson of a parsed spec;
//   parse+compile+render  what `plan` does with a spec file's text:
//                         ParseSpec, then the above.
//
// For each: wall and CPU time per run, µs per node, minor page faults per
// run, the wall time of the first run and the growth of peak RSS; then what
// each stage costs per node. The target is under 50 ms at 1,000 nodes, with
// cost linear in the node count.
//
//   bazel run -c opt //bench:plan_bench
//
// Before its first run each row reserves the heap as `plan` does
// (ReservePlanMemory: one growth backed by huge pages, kept on the heap, so
// the JSON of 10,000 nodes, 47 MiB, is not a mapping of its own). Runs after
// the first reuse that memory; the faults column counts what is faulted in
// again on every run.

#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "tools/cli/prepare.h"
#include "tools/plan/compile.h"
#include "tools/plan/render.h"
#include "tools/spec/cluster_spec.h"
#include "tools/spec/spec_parser.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

constexpr int kNodeCounts[] = {10, 100, 1000, 10000};
constexpr int kTargetNodes = 1000;  // one of kNodeCounts
constexpr double kTargetMs = 50;

// The spec of a cluster of `nodes` nodes shaped like the Lambda seed, scaled
// out: two ssh groups, two GPUs and two ranks per node, keys, sync, a Bazel
// label to build.
std::string SpecToml(int nodes) {
  std::string toml = absl::StrCat("name = \"bench-", nodes, "\"\n", R"(
[defaults]
transport = "ssh"
workdir = "/home/ubuntu/project"
python = { venv = "/home/ubuntu/venvs/train" }
gpus = [0, 1]

[keys]
distribute = true

[sync]
source = "/home/me/project"
exclude = [".git", "bazel-*", "*.pt"]

[env]
NCCL_DEBUG = "INFO"

[network]
nccl_socket_ifname = "auto"
ib = false

[job]
program = "//trainer:train"
args = ["--backend=nccl", "--dataset=fashion-mnist", "--epochs=2"]
)");
  for (int group = 0; group < 2; ++group) {
    absl::StrAppend(&toml, "\n[ssh.group", group, R"(]
user = "ubuntu"
key_file = "~/.ssh/cluster.pem"
env = { LD_LIBRARY_PATH = "$LD_LIBRARY_PATH:/usr/local/cuda/lib64" }
)");
  }
  for (int i = 0; i < nodes; ++i) {
    absl::StrAppend(&toml, "\n[[nodes]]\nname = \"node", i, "\"\naddress = \"10.",
                    i / 65536, ".", (i / 256) % 256, ".", i % 256, "\"\nssh = \"group",
                    i % 2, "\"\n", i == 0 ? "chief = true\n" : "");
  }
  return toml;
}

// A clock reading: wall and process CPU milliseconds, and the minor page
// faults so far (each first touch of a page the heap got from the kernel).
struct Usage {
  double wall_ms = 0;
  double cpu_ms = 0;
  double faults = 0;

  static Usage Now() {
    auto ms = [](clockid_t clock) {
      timespec time;
      clock_gettime(clock, &time);
      return time.tv_sec * 1e3 + time.tv_nsec / 1e6;
    };
    rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return {ms(CLOCK_MONOTONIC), ms(CLOCK_PROCESS_CPUTIME_ID),
            static_cast<double>(usage.ru_minflt)};
  }

  Usage operator-(const Usage& other) const {
    return {wall_ms - other.wall_ms, cpu_ms - other.cpu_ms, faults - other.faults};
  }
  Usage& operator+=(const Usage& other) {
    wall_ms += other.wall_ms;
    cpu_ms += other.cpu_ms;
    faults += other.faults;
    return *this;
  }
  Usage operator/(int runs) const {
    return {wall_ms / runs, cpu_ms / runs, faults / runs};
  }
};

long PeakRssKb() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

enum class Path { kCompileRender, kParseCompileRender };

absl::string_view PathName(Path path) {
  return path == Path::kCompileRender ? "compile+render" : "parse+compile+render";
}

enum Stage { kParse, kCompile, kRender, kStageCount };

// What every run of one path at one node count starts from.
struct Input {
  Path path;
  int nodes;
  std::string spec_path;
  std::string toml;
  ClusterSpec spec;  // parsed from `toml` up front for kCompileRender
};

absl::StatusOr<Input> MakeInput(Path path, int nodes) {
  Input input{path, nodes, absl::StrCat("/specs/bench-", nodes, ".toml"),
              SpecToml(nodes), {}};
  if (path == Path::kCompileRender) {
    FP_ASSIGN_OR_RETURN(input.spec, ParseSpec(input.toml, input.spec_path));
  }
  return input;
}

// Plans `input` once, adding each stage's cost to `stages`. Returns the
// JSON's size, so that the work is kept.
absl::StatusOr<size_t> PlanOnce(const Input& input, Usage (&stages)[kStageCount]) {
  Usage start = Usage::Now();
  std::optional<ClusterSpec> parsed;
  if (input.path == Path::kParseCompileRender) {
    FP_ASSIGN_OR_RETURN(parsed, ParseSpec(input.toml, input.spec_path));
  }
  Usage parse_end = Usage::Now();
  FP_ASSIGN_OR_RETURN(
      Plan plan,
      CompilePlan(parsed ? *parsed : input.spec, {"0123456789abcdef0123456789abcdef"}));
  Usage compile_end = Usage::Now();
  size_t json_bytes = RenderPlanJson(plan).size();
  Usage render_end = Usage::Now();
  stages[kParse] += parse_end - start;
  stages[kCompile] += compile_end - parse_end;
  stages[kRender] += render_end - compile_end;
  return json_bytes;
}

// One path at one node count. Trivially copyable: a child process sends it
// back through a pipe.
struct Row {
  int runs = 0;
  Usage total;                  // of the runs after the first
  Usage stages[kStageCount];    // each stage's part of `total`
  double first_run_ms = 0;      // cold: the heap still grows from the kernel
  double rss_growth_mib = 0;    // what the first run adds to peak RSS
  double json_mib = 0;

  Usage per_run() const { return total / runs; }
};

absl::StatusOr<Row> Measure(const Input& input) {
  Row row;
  // The first run alone sets the peak RSS; later runs reuse its memory.
  long rss_before = PeakRssKb();
  Usage first_stages[kStageCount];
  Usage start = Usage::Now();
  ReservePlanMemory(input.nodes);  // as `plan` does before compiling
  FP_ASSIGN_OR_RETURN(size_t json_bytes, PlanOnce(input, first_stages));
  row.first_run_ms = (Usage::Now() - start).wall_ms;
  row.rss_growth_mib = (PeakRssKb() - rss_before) / 1024.0;
  row.json_mib = json_bytes / (1024.0 * 1024.0);

  // About 20,000 nodes' worth of runs: long enough to average out noise.
  row.runs = std::max(3, 20000 / input.nodes);
  start = Usage::Now();
  for (int i = 0; i < row.runs; ++i) {
    FP_RETURN_IF_ERROR(PlanOnce(input, row.stages).status());
  }
  row.total = Usage::Now() - start;
  return row;
}

// Measures in a process of its own, as `plan` runs: each row starts from a
// fresh heap, and its peak RSS, a high-water mark that never falls, is not
// the one an earlier row left.
absl::StatusOr<Row> MeasureInChild(Path path, int nodes) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return absl::ErrnoToStatus(errno, "pipe");
  pid_t pid = fork();
  if (pid < 0) return absl::ErrnoToStatus(errno, "fork");
  if (pid == 0) {
    close(pipe_fds[0]);
    absl::StatusOr<Input> input = MakeInput(path, nodes);
    absl::StatusOr<Row> row = input.ok() ? Measure(*input) : input.status();
    if (!row.ok()) {
      std::fprintf(stderr, "%s\n", row.status().ToString().c_str());
      _exit(1);
    }
    // At most PIPE_BUF bytes: written, and read, in one piece.
    static_assert(sizeof(Row) <= PIPE_BUF);
    _exit(write(pipe_fds[1], &*row, sizeof(Row)) == sizeof(Row) ? 0 : 1);
  }
  close(pipe_fds[1]);
  Row row;
  ssize_t read_bytes = read(pipe_fds[0], &row, sizeof(row));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (read_bytes != sizeof(row) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(
        absl::StrCat("measuring ", PathName(path), " of ", nodes, " nodes failed"));
  }
  return row;
}

double MicrosPerNode(double ms, int nodes) { return ms * 1e3 / nodes; }

void PrintRow(int nodes, Path path, const Row& row) {
  std::printf("%7d  %-21s %6d %9.2f %9.2f %8.1f %9.0f %9.2f %9.1f %9.2f\n", nodes,
              std::string(PathName(path)).c_str(), row.runs, row.per_run().wall_ms,
              row.per_run().cpu_ms, MicrosPerNode(row.per_run().wall_ms, nodes),
              row.per_run().faults, row.first_run_ms, row.rss_growth_mib, row.json_mib);
}

// Wall µs per node and page faults per run of each stage. What the stages
// leave of a run is mostly freeing the plan and the parsed spec.
void PrintStages(int nodes, const Row& row) {
  auto print = [&](const Usage& total) {
    Usage per_run = total / row.runs;
    std::printf(" %9.2f %7.0f", MicrosPerNode(per_run.wall_ms, nodes), per_run.faults);
  };
  Usage rest = row.total;
  std::printf("%7d", nodes);
  for (const Usage& stage : row.stages) {
    print(stage);
    rest = rest - stage;
  }
  print(rest);
  std::printf("\n");
}

struct SizeRows {
  int nodes;
  Row compile_render;
  Row parse_compile_render;
};

// How many times more a node costs in `large` than in `small`.
double PerNodeRatio(const Row& large, int large_nodes, const Row& small,
                    int small_nodes) {
  return MicrosPerNode(large.per_run().wall_ms, large_nodes) /
         MicrosPerNode(small.per_run().wall_ms, small_nodes);
}

void PrintSummary(const std::vector<SizeRows>& sizes) {
  const SizeRows& target = *std::find_if(
      sizes.begin(), sizes.end(),
      [](const SizeRows& size) { return size.nodes == kTargetNodes; });
  const SizeRows& largest = sizes.back();
  double ms = target.parse_compile_render.per_run().wall_ms;
  std::printf(
      "\n%d nodes: parse+compile+render %.1f ms (first run %.1f ms), %s the %.0f ms "
      "target; us/node at %d vs %d nodes: %.2fx (compile+render %.2fx)\n",
      kTargetNodes, ms, target.parse_compile_render.first_run_ms,
      ms < kTargetMs ? "under" : "OVER", kTargetMs, largest.nodes, kTargetNodes,
      PerNodeRatio(largest.parse_compile_render, largest.nodes,
                   target.parse_compile_render, target.nodes),
      PerNodeRatio(largest.compile_render, largest.nodes, target.compile_render,
                   target.nodes));
}

absl::Status Main() {
  std::vector<SizeRows> sizes;
  std::printf("%7s  %-21s %6s %9s %9s %8s %9s %9s %9s %9s\n", "nodes", "path", "runs",
              "wall ms", "CPU ms", "us/node", "faults", "1st ms", "RSS +MiB",
              "JSON MiB");
  for (int nodes : kNodeCounts) {
    SizeRows& size = sizes.emplace_back();
    size.nodes = nodes;
    FP_ASSIGN_OR_RETURN(size.compile_render,
                        MeasureInChild(Path::kCompileRender, nodes));
    PrintRow(nodes, Path::kCompileRender, size.compile_render);
    FP_ASSIGN_OR_RETURN(size.parse_compile_render,
                        MeasureInChild(Path::kParseCompileRender, nodes));
    PrintRow(nodes, Path::kParseCompileRender, size.parse_compile_render);
    std::fflush(stdout);
  }
  std::printf("\nparse+compile+render by stage: wall us/node, page faults per run\n");
  std::printf("%7s %17s %17s %17s %17s\n", "nodes", "parse", "compile", "render",
              "rest (free)");
  for (const SizeRows& size : sizes) PrintStages(size.nodes, size.parse_compile_render);
  PrintSummary(sizes);
  return absl::OkStatus();
}

}  // namespace
}  // namespace fleetplan

int main() {
  absl::Status status = fleetplan::Main();
  if (!status.ok()) {
    std::fprintf(stderr, "plan_bench: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
