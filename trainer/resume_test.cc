// A two-rank run killed with SIGKILL after a mid-epoch checkpoint resumes at
// the checkpointed step and ends exactly where an uninterrupted run ends:
// same final step, the remaining number of samples, bit-identical weights.

#include <signal.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"
#include "trainer/rank_launcher.h"

namespace fleetplan::trainer {
namespace {

constexpr int kWorldSize = 2;
constexpr int kBatch = 32;
constexpr int kStepsPerEpoch = 30;
constexpr int kTotalSteps = 2 * kStepsPerEpoch;
constexpr int kCheckpointEvery = 20;  // mid-epoch: 20 = epoch 0, step 20

LaunchOptions Options(const std::string& checkpoint_dir, bool resume) {
  LaunchOptions options;
  options.world_size = kWorldSize;
  options.args = {"--dataset=synthetic",
                  "--arch=cnn",
                  "--epochs=2",
                  "--batch-size=" + std::to_string(kBatch),
                  "--steps-per-epoch=" + std::to_string(kStepsPerEpoch),
                  "--checkpoint-every=" + std::to_string(kCheckpointEvery),
                  "--checkpoint-dir=" + checkpoint_dir,
                  "--log-every=1",
                  "--param-digest"};
  if (resume) options.args.push_back("--resume");
  return options;
}

nlohmann::json Done(const RankOutput& out) {
  std::vector<nlohmann::json> done = Events(out, "done");
  EXPECT_EQ(done.size(), 1u) << out.text;
  return done.empty() ? nlohmann::json::object() : done[0];
}

TEST(ResumeTest, KilledRunResumesAtItsCheckpointAndMatchesAnUnbrokenRun) {
  const std::string tmp = std::getenv("TEST_TMPDIR");
  FP_ASSERT_OK_AND_ASSIGN(std::vector<RankOutput> reference,
                          LaunchRanks(Options(tmp + "/reference", false)));
  ASSERT_EQ(reference[0].exit_status, 0)
      << reference[0].text << "rank 1: " << reference[1].text;
  const nlohmann::json expected = Done(reference[0]);
  ASSERT_EQ(expected["step"], kTotalSteps);

  // Kill every rank as soon as rank 0 reports its first checkpoint.
  LaunchOptions killed = Options(tmp + "/broken", false);
  killed.kill_when = [](int rank, const nlohmann::json& line) {
    return rank == 0 && line["event"] == "checkpoint";
  };
  FP_ASSERT_OK_AND_ASSIGN(std::vector<RankOutput> broken, LaunchRanks(killed));
  for (const RankOutput& out : broken) {
    EXPECT_EQ(out.exit_status, 128 + SIGKILL) << out.text;
    EXPECT_TRUE(Events(out, "done").empty());
  }

  FP_ASSERT_OK_AND_ASSIGN(std::vector<RankOutput> resumed,
                          LaunchRanks(Options(tmp + "/broken", true)));
  for (int rank = 0; rank < kWorldSize; ++rank) {
    ASSERT_EQ(resumed[rank].exit_status, 0) << resumed[rank].text;
    std::vector<nlohmann::json> resume = Events(resumed[rank], "resume");
    ASSERT_EQ(resume.size(), 1u);
    const int64_t from = resume[0]["step"];
    EXPECT_EQ(from % kCheckpointEvery, 0);
    EXPECT_GE(from, kCheckpointEvery);
    EXPECT_LT(from, kTotalSteps);
    // The first step trained after resuming is the one after the checkpoint.
    std::vector<nlohmann::json> steps = Events(resumed[rank], "step");
    ASSERT_FALSE(steps.empty());
    EXPECT_EQ(steps.front()["step"], from + 1);
    EXPECT_EQ(steps.front()["epoch"], from / kStepsPerEpoch);

    const nlohmann::json done = Done(resumed[rank]);
    EXPECT_EQ(done["step"], kTotalSteps);
    EXPECT_EQ(done["samples_seen"], (kTotalSteps - from) * kBatch * kWorldSize);
    EXPECT_EQ(done["param_digest"], expected["param_digest"])
        << "rank " << rank << " did not end with the unbroken run's weights";
  }
}

}  // namespace
}  // namespace fleetplan::trainer
