#include "trainer/rank_zero_resume.h"

#include <torch/torch.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/util/status_matchers.h"
#include "trainer/checkpoint.h"
#include "trainer/dataset.h"
#include "trainer/dist_env.h"
#include "trainer/rank_launcher.h"
#include "trainer/rendezvous.h"

namespace fleetplan::trainer {
namespace {

// 100 blank images on 2 ranks of 8: 50 each, 7 steps an epoch.
std::unique_ptr<TrainData> HundredImages(int world_size) {
  LabeledImages images{torch::zeros({100, 1, 28, 28}, torch::kUInt8),
                       torch::zeros({100}, torch::kInt64)};
  return MakeShardedData(std::move(images), {0, world_size, 8, 0});
}

ResumeRun RunAt(int world_size) {
  ResumeRun run;
  run.checkpoint_dir = "/ckpt";
  run.dataset = "fashion-mnist";
  run.world_size = world_size;
  run.batch_size = 8;
  return run;
}

CheckpointInfo WrittenAt(int64_t epoch, int64_t position) {
  CheckpointInfo info;
  info.at = {epoch, position};
  info.step = 10;
  info.world_size = 2;
  info.batch_size = 8;
  info.dataset = "fashion-mnist";
  return info;
}

// Where `info` resumes with `world_size` ranks on the hundred images.
absl::StatusOr<ResumePoint> ResumeAt(const CheckpointInfo& info,
                                     int world_size) {
  return ResumePointOf(info, RunAt(world_size), *HundredImages(world_size));
}

TEST(ResumePointOfTest, KeepsThePositionAtAnotherWorldSize) {
  FP_ASSERT_OK_AND_ASSIGN(ResumePoint point, ResumeAt(WrittenAt(1, 48), 3));
  EXPECT_EQ(point.start.epoch, 1);
  EXPECT_EQ(point.start.position, 48);
  EXPECT_EQ(point.checkpoint_step, 10);
  EXPECT_EQ(point.checkpoint_world_size, 2);
}

TEST(ResumePointOfTest, AnEpochsEndIsTheNextEpochsStart) {
  FP_ASSERT_OK_AND_ASSIGN(ResumePoint point, ResumeAt(WrittenAt(0, 100), 1));
  EXPECT_EQ(point.start.epoch, 1);
  EXPECT_EQ(point.start.position, 0);
}

TEST(ResumePointOfTest, ALegacyStepIsTakenAtThisWorldSizeAndBatch) {
  CheckpointInfo legacy;
  legacy.legacy = true;
  legacy.step = 9;  // 7 steps an epoch: epoch 1, 2 steps of 2 x 8 in
  FP_ASSERT_OK_AND_ASSIGN(ResumePoint point, ResumeAt(legacy, 2));
  EXPECT_EQ(point.start.epoch, 1);
  EXPECT_EQ(point.start.position, 32);
  EXPECT_EQ(point.checkpoint_world_size, 2);
}

TEST(ResumePointOfTest, AnotherDataSetSeedOrLengthIsRefused) {
  CheckpointInfo synthetic = WrittenAt(0, 8);
  synthetic.dataset = "synthetic";
  EXPECT_THAT(ResumeAt(synthetic, 2),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "checkpoint /ckpt/checkpoint.pt was written training "
                       "on --dataset=synthetic, not fashion-mnist"));
  CheckpointInfo seeded = WrittenAt(0, 8);
  seeded.seed = 5;
  EXPECT_THAT(ResumeAt(seeded, 2),
              StatusIs(absl::StatusCode::kFailedPrecondition, "--seed=5"));
  EXPECT_THAT(ResumeAt(WrittenAt(0, 101), 2),
              StatusIs(absl::StatusCode::kDataLoss,
                       "stopped at position 101 of epoch 0"));
}

// A linear model and its SGD; `step` takes one step, for momentum buffers.
struct Replica {
  explicit Replica(bool step) {
    model = torch::nn::Linear(4, 2);
    optimizer = std::make_unique<torch::optim::SGD>(
        model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
    if (step) {
      model->forward(torch::randn({3, 4})).sum().backward();
      optimizer->step();
    }
  }
  at::Tensor Momentum(const at::Tensor& param) {
    auto it = optimizer->state().find(
        c10::guts::to_string(param.unsafeGetTensorImpl()));
    if (it == optimizer->state().end()) return at::Tensor();
    return static_cast<torch::optim::SGDParamState&>(*it->second)
        .momentum_buffer();
  }
  torch::nn::Linear model{nullptr};
  std::unique_ptr<torch::optim::SGD> optimizer;
};

std::string TempDir(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

struct RankResult {
  absl::StatusOr<std::optional<ResumePoint>> resumed;
  at::Tensor weight_momentum;
};

// Two ranks as threads over Gloo, each resuming from its own directory.
std::vector<RankResult> ResumeTwoRanks(const std::vector<std::string>& dirs) {
  const int port = FreePort();
  std::vector<RankResult> results(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      DistEnv env;
      env.rank = env.local_rank = rank;
      env.world_size = env.local_world_size = 2;
      env.master_addr = "127.0.0.1";
      env.master_port = port;
      absl::StatusOr<Group> group =
          Rendezvous(env, Backend::kGloo, absl::Seconds(30));
      if (!group.ok()) {
        results[rank].resumed = group.status();
        return;
      }
      ResumeRun run = RunAt(2);
      run.rank = rank;
      run.checkpoint_dir = dirs[rank];
      Replica replica(/*step=*/false);
      results[rank].resumed =
          ResumeFromRankZero(run, group->process_group.get(),
                             *HundredImages(2), *replica.model,
                             *replica.optimizer);
      results[rank].weight_momentum = replica.Momentum(replica.model->weight);
    });
  }
  for (std::thread& thread : threads) thread.join();
  return results;
}

TEST(ResumeFromRankZeroTest, OnlyRankZerosCheckpointCounts) {
  Replica written(/*step=*/true);
  ASSERT_THAT(SaveCheckpoint(TempDir("rank0"), WrittenAt(1, 48),
                             *written.model, *written.optimizer),
              IsOk());
  // Rank 1's node has a stale, unreadable file: it must not be read.
  ASSERT_THAT(MakeDirs(TempDir("rank1")), IsOk());
  ASSERT_THAT(WriteFileAtomic(CheckpointPath(TempDir("rank1")), "stale", 0644),
              IsOk());

  std::vector<RankResult> ranks =
      ResumeTwoRanks({TempDir("rank0"), TempDir("rank1")});
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE(testing::Message() << "rank " << rank);
    ASSERT_THAT(ranks[rank].resumed, IsOk());
    ASSERT_TRUE(ranks[rank].resumed->has_value());
    const ResumePoint& point = **ranks[rank].resumed;
    EXPECT_EQ(point.start.epoch, 1);
    EXPECT_EQ(point.start.position, 48);
    EXPECT_EQ(point.checkpoint_step, 10);
    EXPECT_EQ(point.checkpoint_world_size, 2);
    ASSERT_TRUE(ranks[rank].weight_momentum.defined());
    EXPECT_TRUE(torch::equal(ranks[rank].weight_momentum,
                             written.Momentum(written.model->weight)));
  }
}

TEST(ResumeFromRankZeroTest, NoCheckpointOnRankZeroStartsEveryRankAfresh) {
  Replica written(/*step=*/true);
  ASSERT_THAT(SaveCheckpoint(TempDir("only_rank1"), WrittenAt(1, 48),
                             *written.model, *written.optimizer),
              IsOk());
  std::vector<RankResult> ranks =
      ResumeTwoRanks({TempDir("nothing"), TempDir("only_rank1")});
  for (const RankResult& rank : ranks) {
    ASSERT_THAT(rank.resumed, IsOk());
    EXPECT_FALSE(rank.resumed->has_value());
  }
}

TEST(ResumeFromRankZeroTest, AnUnusableCheckpointStopsEveryRank) {
  ASSERT_THAT(MakeDirs(TempDir("bad0")), IsOk());
  ASSERT_THAT(WriteFileAtomic(CheckpointPath(TempDir("bad0")), "junk", 0644),
              IsOk());
  std::vector<RankResult> ranks =
      ResumeTwoRanks({TempDir("bad0"), TempDir("nothing1")});
  EXPECT_THAT(ranks[0].resumed,
              StatusIs(absl::StatusCode::kDataLoss, "cannot load checkpoint"));
  EXPECT_THAT(ranks[1].resumed,
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "rank 1: rank 0 could not resume from its checkpoint"));
}

}  // namespace
}  // namespace fleetplan::trainer
