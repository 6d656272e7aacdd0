// A node is lost: the checkpoint a two-rank Fashion-MNIST run left mid-epoch
// is resumed with one rank and with three. Each rank has a checkpoint
// directory of its own, as on a node of its own, and only rank 0's holds the
// checkpoint (rank 1's a stale, unreadable file): the resumed runs start at
// the checkpoint's place in the data, train the rest of the epoch resharded
// among the new ranks, finish, and reach the accuracy of the uninterrupted
// run that wrote the checkpoint. (resume_test kills a run instead; here the
// run goes on, to be the uninterrupted reference, and one epoch keeps the
// test short.)

#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/util/status_matchers.h"
#include "trainer/rank_launcher.h"

namespace fleetplan::trainer {
namespace {

constexpr int kWorldSize = 2;
// Mid-epoch, once: 469 steps an epoch at two ranks of 64; the checkpoint at
// step 250 has trained on the first 250 x 64 x 2 = 32000 samples.
constexpr int kCheckpointEvery = 250;
constexpr int64_t kCheckpointPosition = 32000;
// train_accuracy_test's tolerance; its floor is for two epochs, this for one.
constexpr double kMinAccuracy = 0.85;
constexpr double kTolerance = 0.01;

std::vector<std::string> Flags() {
  return {"--epochs=1", "--batch-size=64", "--log-every=50",
          "--param-digest",
          "--checkpoint-every=" + std::to_string(kCheckpointEvery)};
}

// Every rank gets its own checkpoint directory, dir/rank-N.
LaunchOptions Options(int world_size, const std::string& dir) {
  LaunchOptions options;
  options.world_size = world_size;
  options.args = Flags();
  for (int rank = 0; rank < world_size; ++rank) {
    options.rank_args.push_back(
        {"--checkpoint-dir=" + dir + "/rank-" + std::to_string(rank)});
  }
  options.timeout = absl::Minutes(4);
  return options;
}

bool Exists(const std::string& path) { return ReadFileToString(path).ok(); }

nlohmann::json Only(const RankOutput& out, const std::string& event) {
  std::vector<nlohmann::json> lines = Events(out, event);
  EXPECT_EQ(lines.size(), 1u) << event << " in " << out.text;
  return lines.empty() ? nlohmann::json::object() : lines[0];
}

// What a resume with `world_size` ranks must report.
struct Expected {
  int world_size;
  int64_t steps_per_epoch;  // ceil(ceil(60000 / N) / 64)
  // The steps N ranks take for the first 32000 samples: steps_per_epoch
  // less the steps left for the other 28000.
  int64_t resume_step;
  // The 28000 left, padded to a multiple of N.
  int64_t samples_seen;
};

class ResumeWorldSizeTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = std::getenv("TEST_TMPDIR");
    FP_ASSERT_OK_AND_ASSIGN(std::vector<RankOutput> reference,
                            LaunchRanks(Options(kWorldSize, tmp_ + "/ref")));
    for (const RankOutput& out : reference) ASSERT_EQ(out.exit_status, 0) << out.text;
    reference_accuracy_ = Only(reference[0], "done")["test_accuracy"];
    std::vector<nlohmann::json> checkpoints = Events(reference[0], "checkpoint");
    ASSERT_EQ(checkpoints.size(), 1u) << "one checkpoint, mid-epoch";
    ASSERT_EQ(checkpoints[0]["step"], kCheckpointEvery);
  }

  void ResumeAndCheck(const Expected& want) {
    SCOPED_TRACE(testing::Message() << "world size " << want.world_size);
    const std::string dir = tmp_ + "/resumed-" + std::to_string(want.world_size);
    // Rank 0's node kept its checkpoint; rank 1's has a stale, unreadable
    // one; rank 2's (a new node) has none.
    ASSERT_THAT(CopyFileAtomic(tmp_ + "/ref/rank-0/checkpoint.pt",
                               dir + "/rank-0/checkpoint.pt", 0644),
                IsOk());
    ASSERT_THAT(
        WriteFileAtomic(dir + "/rank-1/checkpoint.pt", "stale\n", 0644),
        IsOk());
    LaunchOptions options = Options(want.world_size, dir);
    options.args.push_back("--resume");
    FP_ASSERT_OK_AND_ASSIGN(std::vector<RankOutput> resumed,
                            LaunchRanks(options));
    for (const RankOutput& out : resumed) ASSERT_EQ(out.exit_status, 0) << out.text;

    const nlohmann::json resume = Only(resumed[0], "resume");
    EXPECT_EQ(resume["checkpoint_world_size"], kWorldSize);
    EXPECT_EQ(resume["world_size"], want.world_size);
    EXPECT_EQ(resume["checkpoint_step"], kCheckpointEvery);
    EXPECT_EQ(resume["epoch"], 0);
    EXPECT_EQ(resume["epoch_position"], kCheckpointPosition);
    EXPECT_EQ(resume["step"], want.resume_step);
    EXPECT_EQ(resume["steps_per_epoch"], want.steps_per_epoch);
    std::vector<nlohmann::json> steps = Events(resumed[0], "step");
    ASSERT_FALSE(steps.empty());
    EXPECT_GT(steps.front()["step"], want.resume_step);
    EXPECT_EQ(steps.front()["epoch"], 0);

    const nlohmann::json done = Only(resumed[0], "done");
    EXPECT_EQ(done["step"], want.steps_per_epoch);
    EXPECT_EQ(done["samples_seen"], want.samples_seen);
    const double accuracy = done["test_accuracy"];
    RecordProperty("test_accuracy", std::to_string(accuracy));
    RecordProperty("reference_accuracy", std::to_string(reference_accuracy_));
    EXPECT_GE(accuracy, kMinAccuracy);
    EXPECT_NEAR(accuracy, reference_accuracy_, kTolerance);
    // Every rank ends with rank 0's weights: they came from its checkpoint.
    for (int rank = 1; rank < want.world_size; ++rank) {
      EXPECT_EQ(Only(resumed[rank], "done")["param_digest"], done["param_digest"])
          << "rank " << rank;
    }
    // Rank 0 alone writes checkpoints.
    if (want.world_size > 2) {
      EXPECT_FALSE(Exists(dir + "/rank-2/checkpoint.pt"));
    }
  }

  static std::string tmp_;
  static double reference_accuracy_;
};

std::string ResumeWorldSizeTest::tmp_;
double ResumeWorldSizeTest::reference_accuracy_ = 0;

TEST_F(ResumeWorldSizeTest, OnlyRankZeroWritesTheCheckpoint) {
  EXPECT_TRUE(Exists(tmp_ + "/ref/rank-0/checkpoint.pt"));
  EXPECT_FALSE(Exists(tmp_ + "/ref/rank-1/checkpoint.pt"));
  EXPECT_GE(reference_accuracy_, kMinAccuracy);
}

TEST_F(ResumeWorldSizeTest, OneRankResumesTheRestOfTheEpoch) {
  // 938 steps an epoch; 32000 samples are 500 steps of 64.
  ResumeAndCheck({1, 938, 500, 28000});
}

TEST_F(ResumeWorldSizeTest, ThreeRanksReshardTheRestOfTheEpoch) {
  // 313 steps an epoch; the 28000 left are 9334 per rank (two padded), 146
  // steps: the checkpoint is at step 313 - 146 = 167.
  ResumeAndCheck({3, 313, 167, 28002});
}

}  // namespace
}  // namespace fleetplan::trainer
