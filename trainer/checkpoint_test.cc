#include "trainer/checkpoint.h"

#include <torch/torch.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/util/status_matchers.h"

namespace fleetplan::trainer {
namespace {

// A small model and its SGD, one step in, so it has momentum buffers.
struct Trained {
  torch::nn::Linear model{nullptr};
  std::unique_ptr<torch::optim::SGD> optimizer;
};

Trained MakeTrained(int inputs, bool step) {
  Trained t;
  t.model = torch::nn::Linear(inputs, 2);
  t.optimizer = std::make_unique<torch::optim::SGD>(
      t.model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  if (step) {
    t.model->forward(torch::ones({3, inputs})).sum().backward();
    t.optimizer->step();
  }
  return t;
}

at::Tensor Momentum(Trained& t, const at::Tensor& param) {
  auto it = t.optimizer->state().find(
      c10::guts::to_string(param.unsafeGetTensorImpl()));
  if (it == t.optimizer->state().end()) return at::Tensor();
  return static_cast<torch::optim::SGDParamState&>(*it->second)
      .momentum_buffer();
}

std::string TempDir(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

TEST(CheckpointTest, RoundTripsWeightsMomentumAndPosition) {
  Trained saved = MakeTrained(4, true);
  CheckpointInfo info;
  info.at = {1, 25600};
  info.step = 669;
  info.world_size = 2;
  info.batch_size = 64;
  info.dataset = "fashion-mnist";
  info.seed = 7;
  const std::string dir = TempDir("round_trip");
  ASSERT_THAT(SaveCheckpoint(dir, info, *saved.model, *saved.optimizer),
              IsOk());

  Trained loaded = MakeTrained(4, false);
  FP_ASSERT_OK_AND_ASSIGN(
      std::optional<CheckpointInfo> read,
      LoadCheckpoint(dir, *loaded.model, *loaded.optimizer));
  ASSERT_TRUE(read.has_value());
  EXPECT_FALSE(read->legacy);
  EXPECT_EQ(read->at.epoch, 1);
  EXPECT_EQ(read->at.position, 25600);
  EXPECT_EQ(read->step, 669);
  EXPECT_EQ(read->world_size, 2);
  EXPECT_EQ(read->batch_size, 64);
  EXPECT_EQ(read->dataset, "fashion-mnist");
  EXPECT_EQ(read->seed, 7u);
  EXPECT_TRUE(torch::equal(loaded.model->weight, saved.model->weight));
  const at::Tensor momentum = Momentum(loaded, loaded.model->weight);
  ASSERT_TRUE(momentum.defined());
  EXPECT_TRUE(torch::equal(momentum, Momentum(saved, saved.model->weight)));
}

TEST(CheckpointTest, NoneIsNotAnError) {
  Trained t = MakeTrained(4, false);
  FP_ASSERT_OK_AND_ASSIGN(
      std::optional<CheckpointInfo> read,
      LoadCheckpoint(TempDir("empty"), *t.model, *t.optimizer));
  EXPECT_FALSE(read.has_value());
}

// Writes a checkpoint file of `t` with one number besides, `key`, as
// another version of the trainer would.
void WriteWithOnly(Trained& t, const std::string& dir, const char* key,
                   int64_t value) {
  torch::serialize::OutputArchive archive, model, optimizer;
  t.model->save(model);
  t.optimizer->save(optimizer);
  archive.write("model", model);
  archive.write("optimizer", optimizer);
  archive.write(key, torch::tensor(value));
  ASSERT_THAT(MakeDirs(dir), IsOk());
  archive.save_to(CheckpointPath(dir));
}

// The trainer's first format: model, optimizer and the step, nothing more.
TEST(CheckpointTest, AnOldCheckpointLoadsAsLegacyWithItsStep) {
  Trained saved = MakeTrained(4, true);
  const std::string dir = TempDir("legacy");
  WriteWithOnly(saved, dir, "fleetplan_step", 42);

  Trained loaded = MakeTrained(4, false);
  FP_ASSERT_OK_AND_ASSIGN(
      std::optional<CheckpointInfo> read,
      LoadCheckpoint(dir, *loaded.model, *loaded.optimizer));
  ASSERT_TRUE(read.has_value());
  EXPECT_TRUE(read->legacy);
  EXPECT_EQ(read->step, 42);
  EXPECT_TRUE(torch::equal(loaded.model->weight, saved.model->weight));
}

TEST(CheckpointTest, ANewerFormatIsRefusedSayingSo) {
  Trained saved = MakeTrained(4, true);
  const std::string dir = TempDir("newer");
  WriteWithOnly(saved, dir, "fleetplan_format", 99);
  EXPECT_THAT(LoadCheckpoint(dir, *saved.model, *saved.optimizer),
              StatusIs(absl::StatusCode::kDataLoss,
                       "has format 99, written by a newer trainer"));
}

TEST(CheckpointTest, GarbageAndAnotherModelAreDataLoss) {
  const std::string garbage = TempDir("garbage");
  ASSERT_THAT(MakeDirs(garbage), IsOk());
  ASSERT_THAT(WriteFileAtomic(CheckpointPath(garbage), "not a checkpoint", 0644),
              IsOk());
  Trained t = MakeTrained(4, false);
  EXPECT_THAT(LoadCheckpoint(garbage, *t.model, *t.optimizer),
              StatusIs(absl::StatusCode::kDataLoss,
                       "cannot load checkpoint " + CheckpointPath(garbage)));

  Trained five = MakeTrained(5, true);
  const std::string other = TempDir("other_model");
  ASSERT_THAT(SaveCheckpoint(other, CheckpointInfo{}, *five.model,
                             *five.optimizer),
              IsOk());
  EXPECT_THAT(LoadCheckpoint(other, *t.model, *t.optimizer),
              StatusIs(absl::StatusCode::kDataLoss,
                       "holds another model: its weight is [2, 5], this "
                       "model's [2, 4]"));
}

}  // namespace
}  // namespace fleetplan::trainer
