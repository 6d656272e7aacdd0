// End-to-end checks of how the train binary fails: clearly, with a non-zero
// exit status, and within its deadlines. Plus quick single-process runs of
// each architecture.

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"
#include "trainer/rank_launcher.h"

namespace fleetplan::trainer {
namespace {

using ::testing::HasSubstr;

TEST(TrainCliTest, MissingMasterFailsWithinTheRendezvousTimeout) {
  LaunchOptions options;
  options.world_size = 2;
  options.ranks = {1};  // nobody runs rank 0, so nothing listens
  options.master_port = FreePort();
  options.args = {"--dataset=synthetic", "--rendezvous-timeout=3"};
  const absl::Time start = absl::Now();
  FP_ASSERT_OK_AND_ASSIGN(std::vector<RankOutput> out, LaunchRanks(options));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(out[0].exit_status, 1);
  EXPECT_THAT(out[0].text,
              HasSubstr("cannot reach the rendezvous master at 127.0.0.1:" +
                        std::to_string(options.master_port) + " within 3s"));
  EXPECT_GE(took, absl::Seconds(2));
  EXPECT_LT(took, absl::Seconds(15));
}

TEST(TrainCliTest, UnknownFlagIsBadInputNamingIt) {
  LaunchOptions options;
  options.world_size = 1;
  options.args = {"--dataset=synthetic", "--no-such-flag=1"};
  FP_ASSERT_OK_AND_ASSIGN(std::vector<RankOutput> out, LaunchRanks(options));
  EXPECT_EQ(out[0].exit_status, 2);
  EXPECT_THAT(out[0].text, HasSubstr("no-such-flag"));
}

TEST(TrainCliTest, HelpListsTheDashedFlags) {
  LaunchOptions options;
  options.world_size = 1;
  options.args = {"--help"};
  FP_ASSERT_OK_AND_ASSIGN(std::vector<RankOutput> out, LaunchRanks(options));
  EXPECT_EQ(out[0].exit_status, 1) << "Abseil's --help exit status";
  EXPECT_THAT(out[0].text, HasSubstr("rendezvous"));
  EXPECT_THAT(out[0].text, HasSubstr("checkpoint"));
}

TEST(TrainCliTest, MasterWhosePeersNeverComeFailsWithinTheTimeout) {
  LaunchOptions options;
  options.world_size = 2;
  options.ranks = {0};
  options.args = {"--dataset=synthetic", "--rendezvous-timeout=3"};
  const absl::Time start = absl::Now();
  FP_ASSERT_OK_AND_ASSIGN(std::vector<RankOutput> out, LaunchRanks(options));
  EXPECT_EQ(out[0].exit_status, 1);
  EXPECT_THAT(out[0].text, HasSubstr("only 1 of 2 ranks reached"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(15));
}

TEST(TrainCliTest, NcclInABuildWithoutItSaysHowToGetIt) {
  LaunchOptions options;
  options.distributed_env = false;
  options.args = {"--backend=nccl", "--dataset=synthetic"};
  FP_ASSERT_OK_AND_ASSIGN(std::vector<RankOutput> out, LaunchRanks(options));
  EXPECT_EQ(out[0].exit_status, 1);
  EXPECT_THAT(out[0].text, HasSubstr("built without NCCL"));
  EXPECT_THAT(out[0].text, HasSubstr("--config=nccl"));
}

TEST(TrainCliTest, MissingDataNamesTheDebianPackage) {
  LaunchOptions options;
  options.distributed_env = false;
  options.args = {"--data-dir=/nonexistent/fashion-mnist"};
  FP_ASSERT_OK_AND_ASSIGN(std::vector<RankOutput> out, LaunchRanks(options));
  EXPECT_EQ(out[0].exit_status, 1);
  EXPECT_THAT(out[0].text,
              HasSubstr("/nonexistent/fashion-mnist/train-images-idx3-ubyte.gz"));
  EXPECT_THAT(out[0].text, HasSubstr("dataset-fashion-mnist"));
}

TEST(TrainCliTest, UnknownArchIsAnError) {
  LaunchOptions options;
  options.distributed_env = false;
  options.args = {"--dataset=synthetic", "--arch=resnet101"};
  FP_ASSERT_OK_AND_ASSIGN(std::vector<RankOutput> out, LaunchRanks(options));
  EXPECT_EQ(out[0].exit_status, 1);
  EXPECT_THAT(out[0].text, HasSubstr("unknown --arch=resnet101"));
}

// Each ResNet trains a few synthetic steps alone and reports its progress.
class ArchTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ArchTest, TrainsSyntheticStepsAlone) {
  LaunchOptions options;
  options.distributed_env = false;
  options.args = {"--dataset=synthetic", "--arch=" + GetParam(),
                  "--image-size=32",     "--batch-size=4",
                  "--steps-per-epoch=3", "--epochs=1",
                  "--log-every=1"};
  FP_ASSERT_OK_AND_ASSIGN(std::vector<RankOutput> out, LaunchRanks(options));
  ASSERT_EQ(out[0].exit_status, 0) << out[0].text;
  std::vector<nlohmann::json> steps = Events(out[0], "step");
  ASSERT_EQ(steps.size(), 3u);
  for (const nlohmann::json& line : steps) {
    EXPECT_GT(line["loss"].get<double>(), 0.0);
    EXPECT_GT(line["samples_per_sec"].get<double>(), 0.0);
    EXPECT_EQ(line["world_size"], 1);
  }
  std::vector<nlohmann::json> done = Events(out[0], "done");
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0]["step"], 3);
  EXPECT_EQ(done[0]["samples_seen"], 12);
}

INSTANTIATE_TEST_SUITE_P(Resnets, ArchTest,
                         ::testing::Values("resnet18", "resnet50"));

}  // namespace
}  // namespace fleetplan::trainer
