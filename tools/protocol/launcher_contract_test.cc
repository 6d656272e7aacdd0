#include "tools/protocol/launcher_contract.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

NodePlace SecondOfTwoNodes() {
  NodePlace place;
  place.node_rank = 1;
  place.num_nodes = 2;
  place.world_size = 4;
  place.local_world_size = 2;
  place.master_addr = "10.0.0.1";
  place.master_port = 1234;
  return place;
}

Generation SecondGeneration() { return Generation{"run-7", 1, 3, "/w/logs/run-7"}; }

const std::vector<std::string> kScript = {"/usr/bin/python3", "main.py", "--backend=gloo"};

TEST(LauncherContractTest, NamesRoundTrip) {
  for (const std::string& name : LauncherNames()) {
    std::optional<Launcher> launcher = ParseLauncher(name);
    ASSERT_TRUE(launcher.has_value()) << name;
    EXPECT_EQ(LauncherName(*launcher), name);
  }
  EXPECT_FALSE(ParseLauncher("torch-run").has_value());
}

TEST(LauncherContractTest, TorchrunNodeAndRank) {
  // torchrun's worker_env (local_elastic_agent.py), value for value.
  EXPECT_THAT(NodeContract(Launcher::kTorchrun, SecondOfTwoNodes()).env,
              ElementsAre(Pair("GROUP_RANK", "1"), Pair("GROUP_WORLD_SIZE", "2"),
                          Pair("LOCAL_WORLD_SIZE", "2"), Pair("MASTER_ADDR", "10.0.0.1"),
                          Pair("MASTER_PORT", "1234"), Pair("ROLE_NAME", "default"),
                          Pair("ROLE_WORLD_SIZE", "4"),
                          Pair("TORCHELASTIC_USE_AGENT_STORE", "False"),
                          Pair("WORLD_SIZE", "4")));
  RankContract rank = ForRank(LauncherConfig(), 3, 1, SecondGeneration(), kScript);
  EXPECT_THAT(rank.env,
              ElementsAre(Pair("LOCAL_RANK", "1"), Pair("RANK", "3"), Pair("ROLE_RANK", "3"),
                          Pair("TORCHELASTIC_ERROR_FILE", "/w/logs/run-7/rank-3.error-1.json"),
                          Pair("TORCHELASTIC_MAX_RESTARTS", "3"),
                          Pair("TORCHELASTIC_RESTART_COUNT", "1"),
                          Pair("TORCHELASTIC_RUN_ID", "run-7")));
  EXPECT_EQ(rank.argv, kScript);
}

TEST(LauncherContractTest, DefaultsTheSpecMayOverride) {
  EXPECT_THAT(NodeContract(Launcher::kTorchrun, SecondOfTwoNodes()).defaults,
              ElementsAre(Pair("NCCL_ASYNC_ERROR_HANDLING", "1"), Pair("OMP_NUM_THREADS", "1"),
                          Pair("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")));
  NodePlace one_rank = SecondOfTwoNodes();
  one_rank.local_world_size = 1;
  EXPECT_THAT(NodeContract(Launcher::kMpirun, one_rank).defaults,
              ElementsAre(Pair("NCCL_ASYNC_ERROR_HANDLING", "1"),
                          Pair("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")));
  EXPECT_FALSE(IsContractVariable(Launcher::kTorchrun, "NCCL_ASYNC_ERROR_HANDLING"));
  EXPECT_FALSE(IsContractVariable(Launcher::kTorchrun, "OMP_NUM_THREADS"));
  EXPECT_TRUE(IsContractVariable(Launcher::kTorchrun, "TORCHELASTIC_USE_AGENT_STORE"));
}

TEST(LauncherContractTest, EveryLauncherGivesEachRankAnErrorFilePerGeneration) {
  for (const std::string& name : LauncherNames()) {
    LauncherConfig config{*ParseLauncher(name), ""};
    Generation first = SecondGeneration();
    first.restart_count = 0;
    EXPECT_THAT(ForRank(config, 3, 1, first, kScript).env,
                testing::Contains(Pair("TORCHELASTIC_ERROR_FILE",
                                       "/w/logs/run-7/rank-3.error-0.json")))
        << name;
    EXPECT_TRUE(IsContractVariable(config.launcher, "TORCHELASTIC_ERROR_FILE")) << name;
  }
}

TEST(LauncherContractTest, DistributedLaunchPassesLocalRankAfterTheScript) {
  LauncherConfig config{Launcher::kDistributedLaunch, ""};
  RankContract rank = ForRank(config, 3, 1, SecondGeneration(), kScript);
  EXPECT_THAT(rank.argv,
              ElementsAre("/usr/bin/python3", "main.py", "--local-rank=1", "--backend=gloo"));
  EXPECT_EQ(rank.env, ForRank(LauncherConfig(), 3, 1, SecondGeneration(), kScript).env);
  config.local_rank_arg = "--local_rank";
  EXPECT_THAT(ForRank(config, 3, 1, SecondGeneration(), kScript).argv,
              ElementsAre("/usr/bin/python3", "main.py", "--local_rank=1", "--backend=gloo"));
  EXPECT_EQ(NodeContract(Launcher::kDistributedLaunch, SecondOfTwoNodes()).env,
            NodeContract(Launcher::kTorchrun, SecondOfTwoNodes()).env);
}

TEST(LauncherContractTest, MpirunSetsOpenMpisVariablesOnly) {
  EXPECT_THAT(NodeContract(Launcher::kMpirun, SecondOfTwoNodes()).env,
              ElementsAre(Pair("MASTER_ADDR", "10.0.0.1"), Pair("MASTER_PORT", "1234"),
                          Pair("OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
                          Pair("OMPI_COMM_WORLD_SIZE", "4"), Pair("OMPI_UNIVERSE_SIZE", "4")));
  RankContract rank =
      ForRank(LauncherConfig{Launcher::kMpirun, "--local_rank"}, 3, 1, SecondGeneration(), kScript);
  EXPECT_THAT(rank.env, ElementsAre(Pair("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
                                    Pair("OMPI_COMM_WORLD_NODE_RANK", "1"),
                                    Pair("OMPI_COMM_WORLD_RANK", "3"),
                                    Pair("TORCHELASTIC_ERROR_FILE",
                                         "/w/logs/run-7/rank-3.error-1.json")));
  EXPECT_EQ(rank.argv, kScript);  // mpirun passes no argument
  EXPECT_FALSE(IsContractVariable(Launcher::kMpirun, "RANK"));
  EXPECT_TRUE(IsContractVariable(Launcher::kMpirun, "OMPI_COMM_WORLD_RANK"));
  EXPECT_TRUE(IsContractVariable(Launcher::kMpirun, "MASTER_ADDR"));
}

TEST(LauncherContractTest, Deepspeed) {
  EXPECT_THAT(NodeContract(Launcher::kDeepspeed, SecondOfTwoNodes()).env,
              ElementsAre(Pair("CROSS_RANK", "1"), Pair("CROSS_SIZE", "2"),
                          Pair("LOCAL_SIZE", "2"), Pair("MASTER_ADDR", "10.0.0.1"),
                          Pair("MASTER_PORT", "1234"), Pair("WORLD_SIZE", "4")));
  RankContract rank =
      ForRank(LauncherConfig{Launcher::kDeepspeed, ""}, 3, 1, SecondGeneration(), kScript);
  EXPECT_THAT(rank.env, ElementsAre(Pair("LOCAL_RANK", "1"), Pair("RANK", "3"),
                                    Pair("TORCHELASTIC_ERROR_FILE",
                                         "/w/logs/run-7/rank-3.error-1.json")));
  EXPECT_THAT(rank.argv,
              ElementsAre("/usr/bin/python3", "main.py", "--local_rank=1", "--backend=gloo"));
  EXPECT_FALSE(IsContractVariable(Launcher::kDeepspeed, "TORCHELASTIC_RUN_ID"));
}

TEST(LauncherContractTest, InsertLauncherArg) {
  EXPECT_THAT(InsertLauncherArg({"./train", "--epochs=1"}, "--local-rank=0"),
              ElementsAre("./train", "--local-rank=0", "--epochs=1"));
  EXPECT_THAT(InsertLauncherArg({"python3.11", "-u", "-W", "ignore", "x.py", "a"}, "--l=0"),
              ElementsAre("python3.11", "-u", "-W", "ignore", "x.py", "--l=0", "a"));
  EXPECT_THAT(InsertLauncherArg({"/venv/bin/python", "-m", "pkg.train", "a"}, "--l=0"),
              ElementsAre("/venv/bin/python", "-m", "pkg.train", "--l=0", "a"));
  EXPECT_THAT(InsertLauncherArg({"python3"}, "--l=0"), ElementsAre("python3", "--l=0"));
  EXPECT_THAT(InsertLauncherArg({"/opt/pythonista"}, "--l=0"),
              ElementsAre("/opt/pythonista", "--l=0"));
  EXPECT_THAT(InsertLauncherArg({}, "--l=0"), ElementsAre("--l=0"));
  EXPECT_THAT(NodeContract(Launcher::kTorchrun, NodePlace()).env, testing::Not(IsEmpty()));
}

// A generation's members place each node as the plan places a job of
// those nodes: ranks contiguous in the members' order.
TEST(LauncherContractTest, PlaceAmongRenumbersTheMembersContiguously) {
  std::vector<GenerationMember> members = {{"a", 2}, {"c", 1}, {"d", 2}};
  std::optional<GenerationPlace> d = PlaceAmong(members, "d");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->first_rank, 3);
  EXPECT_EQ(d->place.node_rank, 2);
  EXPECT_EQ(d->place.num_nodes, 3);
  EXPECT_EQ(d->place.world_size, 5);
  EXPECT_EQ(d->place.local_world_size, 2);
  std::optional<GenerationPlace> a = PlaceAmong(members, "a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->first_rank, 0);
  EXPECT_EQ(a->place.world_size, 5);
  EXPECT_FALSE(PlaceAmong(members, "b").has_value());
  EXPECT_FALSE(PlaceAmong({}, "a").has_value());
}

TEST(LauncherContractTest, AGenerationsContractLeavesTheMasterToEnvSh) {
  NodePlace place = SecondOfTwoNodes();
  ContractEnv env = GenerationContract(Launcher::kTorchrun, place);
  ContractEnv full = NodeContract(Launcher::kTorchrun, place).env;
  EXPECT_EQ(env.size() + 2, full.size());
  EXPECT_THAT(env, testing::Contains(Pair("WORLD_SIZE", "4")));
  EXPECT_THAT(env, testing::Contains(Pair("GROUP_RANK", "1")));
  EXPECT_THAT(env, testing::Contains(Pair("GROUP_WORLD_SIZE", "2")));
  for (const auto& [name, value] : env) {
    EXPECT_NE(name, "MASTER_ADDR");
    EXPECT_NE(name, "MASTER_PORT");
  }
}

}  // namespace
}  // namespace fleetplan
