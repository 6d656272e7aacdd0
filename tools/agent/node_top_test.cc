#include "tools/agent/node_top.h"

#include <string>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/process/subprocess.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Optional;

const absl::Time kNow = absl::FromUnixSeconds(1700000100);

NodeJobState Job() {
  NodeJobState job;
  job.run_id = "r1";
  job.node = "a";
  job.generation = 1;
  job.phase = JobPhase::kRunning;
  job.updated_at = kNow - absl::Seconds(1);
  job.ranks = {{4, 100, std::nullopt}, {5, 101, std::nullopt}, {6, 102, 0}, {7, 0, std::nullopt}};
  return job;
}

TEST(NodeTopTest, EachRanksFiguresComeFromItsSources) {
  NodeJobState job = Job();
  NodeTopInputs inputs;
  inputs.node = "a";
  inputs.job = &job;
  inputs.now = kNow;
  inputs.sample.cpu_percent = 40;
  inputs.sample.memory_bytes = 1 << 20;
  inputs.sample.gpus.reset();
  inputs.sample.trees[100] = {99.0, 4096};  // rank 4 runs; rank 5's pid is gone
  inputs.output_at[4] = kNow - absl::Seconds(2);
  ProgressRecord progress;
  progress.generation = 1;
  progress.written = kNow - absl::Seconds(1);
  progress.ranks = {{4, {{kNow - absl::Seconds(11), 100}, {kNow - absl::Seconds(1), 150}}}};
  inputs.progress = progress;
  TopReport report = AssembleNodeTop(inputs);
  EXPECT_EQ(report.state, "running");
  EXPECT_EQ(report.run_id, "r1");
  EXPECT_EQ(report.generation, 1);
  ASSERT_EQ(report.nodes.size(), 1u);
  const NodeFigures& node = report.nodes[0];
  EXPECT_EQ(node.name, "a");
  EXPECT_FALSE(node.gpus.has_value());
  ASSERT_EQ(node.ranks.size(), 4u);
  const RankFigures& four = node.ranks[0];
  EXPECT_EQ(four.state, RankRunState::kRunning);
  EXPECT_THAT(four.cpu_percent, Optional(99.0));
  EXPECT_THAT(four.rss_bytes, Optional(4096u));
  EXPECT_THAT(four.last_output_age_s, Optional(DoubleNear(2.0, 1e-9)));
  EXPECT_THAT(four.step, Optional(150));
  EXPECT_THAT(four.steps_per_s, Optional(DoubleNear(5.0, 1e-9)));
  EXPECT_EQ(node.ranks[1].state, RankRunState::kGone);
  EXPECT_EQ(node.ranks[1].cpu_percent, std::nullopt);
  EXPECT_EQ(node.ranks[1].local_rank, 1);
  EXPECT_EQ(node.ranks[2].state, RankRunState::kExited);
  EXPECT_EQ(node.ranks[3].state, RankRunState::kNotStarted);
  EXPECT_EQ(node.ranks[3].step, std::nullopt);
  // Another generation's steps are not this one's.
  inputs.progress->generation = 0;
  EXPECT_EQ(AssembleNodeTop(inputs).nodes[0].ranks[0].step, std::nullopt);
}

TEST(NodeTopTest, AnAgentThatStoppedWritingIsLostAndNoJobIsNone) {
  NodeJobState job = Job();
  job.updated_at = kNow - absl::Minutes(5);
  NodeTopInputs inputs;
  inputs.node = "a";
  inputs.job = &job;
  inputs.now = kNow;
  EXPECT_EQ(AssembleNodeTop(inputs).state, "lost");
  inputs.job = nullptr;
  TopReport none = AssembleNodeTop(inputs);
  EXPECT_EQ(none.state, "none");
  ASSERT_EQ(none.nodes.size(), 1u);
  EXPECT_TRUE(none.nodes[0].ranks.empty());
}

std::unique_ptr<Subprocess> Start(std::vector<std::string> argv,
                                  std::vector<std::pair<std::string, std::string>> env = {}) {
  SubprocessOptions options;
  options.argv = std::move(argv);
  options.env = std::move(env);
  absl::StatusOr<std::unique_ptr<Subprocess>> process = Subprocess::Start(options);
  EXPECT_THAT(process, IsOk());
  return process.ok() ? *std::move(process) : nullptr;
}

// On this machine: the ranks' processes in /proc, their logs and
// progress.json, and nvidia-smi found on the launch agent's PATH.
TEST(NodeTopTest, OnTheNodeItReadsTheJobProcAndTheLaunchAgentsPath) {
  std::string smi = MakeTempDir();
  ASSERT_THAT(WriteFileAtomic(smi + "/nvidia-smi", "#!/bin/sh\necho '0, 77, 1, 2'\n", 0755),
              IsOk());
  auto agent = Start({"/bin/sleep", "30"}, {{"PATH", smi + ":/usr/bin:/bin"}});
  auto rank = Start({"/bin/sleep", "30"});
  ASSERT_TRUE(agent != nullptr && rank != nullptr);
  std::string log_dir = MakeTempDir();
  NodeJobState job;
  job.run_id = "r1";
  job.node = "a";
  job.agent_pid = agent->pid();
  job.phase = JobPhase::kRunning;
  job.updated_at = absl::Now();
  job.ranks = {{0, rank->pid(), std::nullopt}};
  ASSERT_THAT(WriteFileAtomic(JobStatePath(log_dir), JobStateToJson(job), 0600), IsOk());
  std::string run_dir = RunDir(log_dir, "r1");
  ASSERT_THAT(MakeDirs(run_dir), IsOk());
  ASSERT_THAT(WriteFileAtomic(RankLogPath(run_dir, 0), "step 1\n", 0600), IsOk());
  ProgressRecord progress;
  progress.written = absl::Now();
  progress.ranks = {{0, {{absl::Now() - absl::Seconds(4), 1}, {absl::Now(), 9}}}};
  ASSERT_THAT(WriteFileAtomic(ProgressPath(run_dir), ProgressRecordToJson(progress), 0600),
              IsOk());
  NodeTopOptions options;
  options.log_dir = log_dir;
  options.node = "a";
  options.window = absl::Milliseconds(50);
  FP_ASSERT_OK_AND_ASSIGN(TopReport report, NodeTop(options));
  ASSERT_EQ(report.nodes.size(), 1u);
  const NodeFigures& node = report.nodes[0];
  EXPECT_TRUE(node.cpu_percent.has_value());
  EXPECT_TRUE(node.memory_bytes.has_value());
  ASSERT_TRUE(node.gpus.has_value());
  EXPECT_THAT(*node.gpus, ElementsAre(GpuFigures{0, 77.0, 1 << 20, 2 << 20}));
  ASSERT_EQ(node.ranks.size(), 1u);
  EXPECT_EQ(node.ranks[0].state, RankRunState::kRunning);
  EXPECT_THAT(node.ranks[0].cpu_percent, Optional(DoubleNear(0.0, 25.0)));
  EXPECT_GT(node.ranks[0].rss_bytes.value_or(0), 0u);
  EXPECT_THAT(node.ranks[0].last_output_age_s, Optional(DoubleNear(0.0, 10.0)));
  EXPECT_THAT(node.ranks[0].step, Optional(9));
  EXPECT_THAT(node.ranks[0].steps_per_s, Optional(DoubleNear(2.0, 0.1)));
  // It left where its sample ended, the rank's processes among it, for the
  // next request to measure from.
  FP_ASSERT_OK_AND_ASSIGN(std::string left, ReadFileToString(TopSamplePath(log_dir)));
  std::optional<Snapshot> end = SnapshotFromJson(left);
  ASSERT_TRUE(end.has_value()) << left;
  ASSERT_EQ(end->processes.size(), 1u) << left;
  EXPECT_EQ(end->processes[0].pid, rank->pid());
  // Without a job the node is still shown.
  ASSERT_EQ(unlink(JobStatePath(log_dir).c_str()), 0);
  FP_ASSERT_OK_AND_ASSIGN(TopReport none, NodeTop(options));
  EXPECT_EQ(none.state, "none");
  EXPECT_TRUE(none.nodes[0].memory_bytes.has_value());
  // A broken job.json is an error.
  ASSERT_THAT(WriteFileAtomic(JobStatePath(log_dir), "{", 0600), IsOk());
  EXPECT_THAT(NodeTop(options), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fleetplan
