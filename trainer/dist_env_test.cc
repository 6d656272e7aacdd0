#include "trainer/dist_env.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan::trainer {
namespace {

using ::testing::HasSubstr;

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(DistEnvTest, NothingSetIsASingleProcess) {
  FP_ASSERT_OK_AND_ASSIGN(DistEnv env, DistEnvFromEnvironment(FakeEnv({})));
  EXPECT_EQ(env.rank, 0);
  EXPECT_EQ(env.world_size, 1);
  EXPECT_FALSE(env.distributed());
}

TEST(DistEnvTest, ReadsTheTorchrunContract) {
  FP_ASSERT_OK_AND_ASSIGN(
      DistEnv env, DistEnvFromEnvironment(FakeEnv({{"RANK", "3"},
                                                   {"LOCAL_RANK", "1"},
                                                   {"WORLD_SIZE", "4"},
                                                   {"LOCAL_WORLD_SIZE", "2"},
                                                   {"MASTER_ADDR", "127.0.0.1"},
                                                   {"MASTER_PORT", "29500"}})));
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.world_size, 4);
  EXPECT_EQ(env.local_world_size, 2);
  EXPECT_EQ(env.master_addr, "127.0.0.1");
  EXPECT_EQ(env.master_port, 29500);
  EXPECT_TRUE(env.distributed());
}

TEST(DistEnvTest, LocalValuesDefaultToGlobalOnes) {
  FP_ASSERT_OK_AND_ASSIGN(
      DistEnv env, DistEnvFromEnvironment(FakeEnv({{"RANK", "1"},
                                                   {"WORLD_SIZE", "2"},
                                                   {"MASTER_ADDR", "localhost"},
                                                   {"MASTER_PORT", "1234"}})));
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.local_world_size, 2);
}

TEST(DistEnvTest, PartialContractNamesTheMissingVariable) {
  EXPECT_THAT(DistEnvFromEnvironment(FakeEnv({{"RANK", "0"},
                                              {"WORLD_SIZE", "2"},
                                              {"MASTER_PORT", "1234"}})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("MASTER_ADDR is not set")));
}

TEST(DistEnvTest, RankOutOfRange) {
  EXPECT_THAT(DistEnvFromEnvironment(FakeEnv({{"RANK", "2"},
                                              {"WORLD_SIZE", "2"},
                                              {"MASTER_ADDR", "127.0.0.1"},
                                              {"MASTER_PORT", "1234"}})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("RANK=\"2\": expected an integer in [0, 1]")));
}

TEST(DistEnvTest, PortNotANumber) {
  EXPECT_THAT(DistEnvFromEnvironment(FakeEnv({{"RANK", "0"},
                                              {"WORLD_SIZE", "1"},
                                              {"MASTER_ADDR", "127.0.0.1"},
                                              {"MASTER_PORT", "http"}})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("MASTER_PORT=\"http\"")));
}

}  // namespace
}  // namespace fleetplan::trainer
