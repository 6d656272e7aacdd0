// Real data-parallel training on Fashion-MNIST: 1, 2 and 4 ranks as separate
// processes over Gloo on 127.0.0.1 each reach 0.88 test accuracy in two
// epochs, agree within one point, and keep bit-identical parameters.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"
#include "trainer/rank_launcher.h"

namespace fleetplan::trainer {
namespace {

constexpr double kMinAccuracy = 0.88;
// The global batch and the peak learning rate are the same at every world
// size (per-rank batch 128 / N, per-rank rate 0.06 / N, which linear scaling
// multiplies back by N), so the runs differ only in how the work is split.
constexpr int kGlobalBatch = 128;
constexpr double kPeakLr = 0.06;

// Runs `world_size` ranks for two epochs; checks their replicas and returns
// the final test accuracy.
double TrainAndCheck(int world_size) {
  SCOPED_TRACE(testing::Message() << "world size " << world_size);
  LaunchOptions options;
  options.world_size = world_size;
  options.args = {"--epochs=2", "--log-every=50", "--param-digest",
                  "--batch-size=" + std::to_string(kGlobalBatch / world_size),
                  "--lr=" + std::to_string(kPeakLr / world_size)};
  options.timeout = absl::Minutes(4);
  absl::StatusOr<std::vector<RankOutput>> out = LaunchRanks(options);
  EXPECT_THAT(out, IsOk());
  if (!out.ok()) return 0;

  // step -> digest reported by rank 0; every other rank must match it.
  std::map<int64_t, std::string> digests;
  for (int rank = 0; rank < world_size; ++rank) {
    const RankOutput& rank_out = (*out)[rank];
    EXPECT_EQ(rank_out.exit_status, 0) << rank_out.text;
    for (const nlohmann::json& line : Events(rank_out, "step")) {
      const std::string digest = line["param_digest"];
      auto [it, inserted] = digests.emplace(line["step"], digest);
      EXPECT_EQ(it->second, digest)
          << "rank " << rank << " differs at step " << line["step"];
    }
  }
  // The digests must really track training: distinct at every step logged.
  std::set<std::string> distinct;
  for (const auto& [step, digest] : digests) distinct.insert(digest);
  EXPECT_GE(digests.size(), 3u);
  EXPECT_EQ(distinct.size(), digests.size());

  std::vector<nlohmann::json> epochs = Events((*out)[0], "epoch");
  EXPECT_EQ(epochs.size(), 2u);
  if (epochs.size() != 2) return 0;
  for (const nlohmann::json& line : epochs) {
    EXPECT_EQ(line["world_size"], world_size);
    EXPECT_GT(line["samples_per_sec"].get<double>(), 0.0);
    EXPECT_LT(line["loss"].get<double>(), 0.6);
  }
  const double accuracy = epochs[1]["test_accuracy"];
  EXPECT_GE(accuracy, kMinAccuracy);
  return accuracy;
}

TEST(TrainAccuracyTest, OneTwoAndFourRanksReachTheSameAccuracy) {
  const double one = TrainAndCheck(1);
  const double two = TrainAndCheck(2);
  const double four = TrainAndCheck(4);
  EXPECT_NEAR(one, two, 0.01);
  EXPECT_NEAR(one, four, 0.01);
  EXPECT_NEAR(two, four, 0.01);
}

}  // namespace
}  // namespace fleetplan::trainer
