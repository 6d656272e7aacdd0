#include "tools/agent/node_sampler.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;
using ::testing::Optional;

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(NodeSamplerTest, CpuTimesLeaveIdleAndIowaitOut) {
  std::optional<CpuTimes> times =
      ParseCpuTimes("cpu  100 5 20 1000 50 1 2 3 7 0\ncpu0 50 2 10 500 25 0 1 1 0 0\n");
  ASSERT_TRUE(times.has_value());
  EXPECT_EQ(times->total, 100u + 5 + 20 + 1000 + 50 + 1 + 2 + 3);
  EXPECT_EQ(times->busy, 100u + 5 + 20 + 1 + 2 + 3);
  EXPECT_EQ(ParseCpuTimes("intr 1 2 3\n"), std::nullopt);
  EXPECT_EQ(ParseCpuTimes("cpu  a b c d\n"), std::nullopt);
}

TEST(NodeSamplerTest, MemoryInUseIsTotalLessAvailable) {
  EXPECT_THAT(ParseMemoryInUse("MemTotal:       16000 kB\nMemFree:    1000 kB\n"
                               "MemAvailable:    4000 kB\n"),
              Optional(uint64_t{12000} * 1024));
  EXPECT_EQ(ParseMemoryInUse("MemTotal:       16000 kB\n"), std::nullopt);
}

TEST(NodeSamplerTest, GpuFiguresAGpuDoesNotReportAreUnknown) {
  std::optional<std::vector<GpuFigures>> gpus =
      ParseGpuCsv("0, 98, 10240, 81920\n1, [N/A], [N/A], 81920\n");
  ASSERT_TRUE(gpus.has_value());
  EXPECT_THAT(*gpus, ElementsAre(GpuFigures{0, 98.0, 10240 * kMiB, 81920 * kMiB},
                                 GpuFigures{1, std::nullopt, std::nullopt, 81920 * kMiB}));
  // A warning before the figures is passed by.
  gpus = ParseGpuCsv("WARNING: infoROM is corrupted at gpu 0000:00:04.0\n0, 5, 1, 2\n");
  ASSERT_TRUE(gpus.has_value());
  EXPECT_EQ(gpus->size(), 1u);
  // No GPU's line at all: unknown, not "no GPUs".
  EXPECT_EQ(ParseGpuCsv("NVIDIA-SMI has failed because it couldn't communicate with the "
                        "NVIDIA driver.\n"),
            std::nullopt);
  EXPECT_EQ(ParseGpuCsv(""), std::nullopt);
}

ProcessInfo Process(pid_t pid, pid_t ppid, uint64_t ticks, uint64_t rss_pages) {
  return ProcessInfo{pid, ppid, ticks, rss_pages};
}

TEST(NodeSamplerTest, ATreesCpuIsWhatItsProcessesUsedMeanwhile) {
  Snapshot before{absl::FromUnixSeconds(100), CpuTimes{1000, 4000},
                  {Process(10, 1, 500, 100), Process(11, 10, 50, 10), Process(20, 1, 70, 30)}};
  // Over 2 s at 100 ticks a second: rank 10 used 150 ticks itself and its
  // child 50 more, and a child that started meanwhile 20; rank 20 used 2.
  Snapshot after{absl::FromUnixSeconds(102), CpuTimes{1300, 4400},
                 {Process(10, 1, 650, 200), Process(11, 10, 100, 10), Process(12, 11, 20, 5),
                  Process(20, 1, 72, 30)}};
  NodeSample sample = FiguresBetween(before, after, {10, 20, 30}, 100, 4096);
  EXPECT_THAT(sample.cpu_percent, Optional(DoubleNear(75.0, 1e-9)));
  ASSERT_EQ(sample.trees.count(10), 1u);
  EXPECT_DOUBLE_EQ(sample.trees[10].cpu_percent, 110.0);  // over one core: 220 ticks in 2 s
  EXPECT_EQ(sample.trees[10].rss_bytes, (200u + 10 + 5) * 4096);
  EXPECT_DOUBLE_EQ(sample.trees[20].cpu_percent, 1.0);
  EXPECT_EQ(sample.trees.count(30), 0u) << "not running";
  // No /proc/stat: the node's CPU is unknown.
  before.cpu.reset();
  EXPECT_EQ(FiguresBetween(before, after, {}, 100, 4096).cpu_percent, std::nullopt);
}

// An executable `nvidia-smi` in a folder of its own, running `body`.
std::string StandIn(const std::string& body) {
  std::string dir = MakeTempDir();
  EXPECT_THAT(WriteFileAtomic(dir + "/nvidia-smi", "#!/bin/sh\n" + body + "\n", 0755), IsOk());
  return dir;
}

TEST(NodeSamplerTest, NvidiaSmiAbsentFailingOrAnswering) {
  EXPECT_THAT(NvidiaSmiQuery(MakeTempDir())(), Optional(IsEmpty())) << "none on PATH";
  EXPECT_EQ(NvidiaSmiQuery(StandIn("echo 'No devices were found' >&2; exit 6"))(),
            std::nullopt);
  EXPECT_EQ(NvidiaSmiQuery(StandIn("sleep 30"), absl::Milliseconds(300))(), std::nullopt);
  std::string answering = StandIn(
      "[ \"$1\" = --query-gpu=index,utilization.gpu,memory.used,memory.total ] || exit 9\n"
      "echo '0, 42, 100, 200'");
  std::optional<std::vector<GpuFigures>> gpus = NvidiaSmiQuery(answering)();
  ASSERT_TRUE(gpus.has_value());
  EXPECT_THAT(*gpus, ElementsAre(GpuFigures{0, 42.0, 100 * kMiB, 200 * kMiB}));
}

TEST(NodeSamplerTest, ASnapshotIsReadBackAsWritten) {
  Snapshot snapshot{absl::FromUnixSeconds(1700000000) + absl::Milliseconds(250),
                    CpuTimes{300, 1000},
                    {Process(10, 1, 500, 0), Process(11, 10, 7, 0)}};
  std::optional<Snapshot> read = SnapshotFromJson(SnapshotToJson(snapshot));
  ASSERT_TRUE(read.has_value());
  EXPECT_LT(absl::AbsDuration(read->at - snapshot.at), absl::Microseconds(1));
  ASSERT_TRUE(read->cpu.has_value());
  EXPECT_EQ(read->cpu->busy, 300u);
  EXPECT_EQ(read->cpu->total, 1000u);
  ASSERT_EQ(read->processes.size(), 2u);
  EXPECT_EQ(read->processes[1].pid, 11);
  EXPECT_EQ(read->processes[1].ppid, 10);
  EXPECT_EQ(read->processes[1].cpu_ticks, 7u);
  EXPECT_EQ(SnapshotFromJson("{\"at\":1,\"processes\":[[1,2]]}"), std::nullopt);
  EXPECT_EQ(SnapshotFromJson("not json"), std::nullopt);
}

// A fake /proc: one rank (pid 77) that has used `ticks`.
std::string FakeProc(uint64_t ticks) {
  std::string proc = MakeTempDir();
  EXPECT_THAT(WriteFileAtomic(proc + "/stat", "cpu  1 2 3 4 5 6 7 8\n", 0644), IsOk());
  EXPECT_THAT(WriteFileAtomic(proc + "/meminfo", "MemTotal: 10 kB\nMemAvailable: 4 kB\n", 0644),
              IsOk());
  EXPECT_THAT(MakeDirs(proc + "/77"), IsOk());
  EXPECT_THAT(WriteFileAtomic(proc + "/77/stat",
                              absl::StrCat("77 (python) S 1 77 77 0 -1 0 0 0 0 0 ", ticks,
                                           " 0 0 0 20 0 1 0 1 1 3\n"),
                              0644),
              IsOk());
  return proc;
}

TEST(NodeSamplerTest, CpuUseIsTakenSinceTheLastSampleWhenItIsRecent) {
  SamplerOptions options;
  options.proc_root = FakeProc(1000);
  options.window = absl::Milliseconds(10);
  // The last request's sample, 2 s ago: rank 77 had used 800 ticks.
  Snapshot since{absl::Now() - absl::Seconds(2), std::nullopt, {Process(77, 1, 800, 0)}};
  options.since = since;
  NodeSample sample = SampleNode({77}, options);
  // 200 ticks in about 2 s.
  EXPECT_NEAR(sample.trees[77].cpu_percent,
              100.0 * 200 / (2.0 * sysconf(_SC_CLK_TCK)), 10.0);
  EXPECT_THAT(sample.end.processes, ElementsAre(Field(&ProcessInfo::cpu_ticks, 1000u)));
  // Too old to measure from: the window alone, in which nothing moved.
  since.at = absl::Now() - absl::Minutes(5);
  options.since = since;
  EXPECT_DOUBLE_EQ(SampleNode({77}, options).trees[77].cpu_percent, 0.0);
}

TEST(NodeSamplerTest, SampleNodeReadsProcAndAsksForTheGpus) {
  std::string proc = MakeTempDir();
  ASSERT_THAT(WriteFileAtomic(proc + "/stat", "cpu  1 2 3 4 5 6 7 8\n", 0644), IsOk());
  ASSERT_THAT(WriteFileAtomic(proc + "/meminfo", "MemTotal: 10 kB\nMemAvailable: 4 kB\n", 0644),
              IsOk());
  ASSERT_THAT(MakeDirs(proc + "/77"), IsOk());
  ASSERT_THAT(WriteFileAtomic(proc + "/77/stat",
                              "77 (python) S 1 77 77 0 -1 0 0 0 0 0 10 5 0 0 20 0 1 0 1 1 3\n",
                              0644),
              IsOk());
  SamplerOptions options;
  options.proc_root = proc;
  options.window = absl::Milliseconds(20);
  options.gpus = [] { return std::optional<std::vector<GpuFigures>>(); };
  NodeSample sample = SampleNode({77, 78}, options);
  EXPECT_THAT(sample.memory_bytes, Optional(uint64_t{6 * 1024}));
  EXPECT_FALSE(sample.gpus.has_value()) << "the query's unknown kept";
  ASSERT_EQ(sample.trees.count(77), 1u);
  EXPECT_EQ(sample.trees[77].rss_bytes, 3u * sysconf(_SC_PAGESIZE));
  EXPECT_DOUBLE_EQ(sample.trees[77].cpu_percent, 0.0);
  EXPECT_EQ(sample.trees.count(78), 0u);
}

}  // namespace
}  // namespace fleetplan
