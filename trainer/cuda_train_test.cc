// The trainer's GPU path: one rank per CUDA device with the NCCL process
// group trains the CNN on Fashion-MNIST to the accuracy the Gloo path
// reaches beside it. Runs only where a CUDA device is; elsewhere every case
// is reported as skipped, never as passed. On a GPU machine:
//   bazel test --config=nccl //trainer:cuda_train_test
// (tools/test-all.sh adds --config=nccl by itself when nvidia-smi lists a
// GPU).

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"
#include "trainer/cuda_device_count.h"
#include "trainer/rank_launcher.h"

namespace fleetplan::trainer {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Trains one epoch on `world_size` ranks with `backend`; returns rank 0's
// final test accuracy (0 on failure, with the failure recorded).
double TrainOneEpoch(const std::string& backend, int world_size) {
  SCOPED_TRACE(backend);
  LaunchOptions options;
  options.world_size = world_size;
  options.args = {"--backend=" + backend, "--epochs=1", "--log-every=100"};
  options.timeout = absl::Minutes(5);
  absl::StatusOr<std::vector<RankOutput>> out = LaunchRanks(options);
  EXPECT_THAT(out, IsOk());
  if (!out.ok()) return 0;
  for (const RankOutput& rank : *out) {
    EXPECT_THAT(rank.text, Not(HasSubstr("--config=nccl")))
        << "this binary has no NCCL: run bazel test --config=nccl";
    EXPECT_EQ(rank.exit_status, 0) << rank.text;
  }
  std::vector<nlohmann::json> epochs = Events((*out)[0], "epoch");
  EXPECT_EQ(epochs.size(), 1u);
  return epochs.empty() ? 0 : epochs.back().value("test_accuracy", 0.0);
}

TEST(CudaTrainTest, NcclReachesTheAccuracyOfGloo) {
  const int devices = CudaDeviceCount();
  if (devices == 0) GTEST_SKIP() << "no CUDA device on this host";
  const double nccl = TrainOneEpoch("nccl", devices);
  const double gloo = TrainOneEpoch("gloo", devices);
  EXPECT_GE(nccl, 0.85);
  EXPECT_NEAR(nccl, gloo, 0.01);
}

}  // namespace
}  // namespace fleetplan::trainer
