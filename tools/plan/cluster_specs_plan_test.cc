// The rank layout of every example spec under cluster_specs/, as DESIGN.md's
// "Derived per rank" lays it out.

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/plan/compile.h"
#include "tools/spec/spec_parser.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

// One rank's layout, read back from its environment.
struct Layout {
  std::string node;
  std::map<std::string, std::string> env;
};

std::vector<Layout> Ranks(const std::string& name) {
  std::string path =
      std::string(std::getenv("TEST_SRCDIR")) + "/fleetplan/cluster_specs/" + name;
  absl::StatusOr<ClusterSpec> spec = LoadSpecFile(path);
  EXPECT_THAT(spec, IsOk()) << name;
  if (!spec.ok()) return {};
  absl::StatusOr<Plan> plan = CompilePlan(*spec, CompileInputs{"0123"});
  EXPECT_THAT(plan, IsOk()) << name;
  if (!plan.ok()) return {};
  std::vector<Layout> ranks;
  for (const RankEnv& rank : plan->ranks) {
    EXPECT_EQ(rank.rank, static_cast<int>(ranks.size())) << name;
    Layout layout{rank.node, {}};
    for (const auto& [key, value] : rank.env) layout.env[key] = value;
    ranks.push_back(std::move(layout));
  }
  return ranks;
}

// Checks rank `r`'s contract variables.
void ExpectRank(const Layout& rank, int r, int local_rank, int local_world, int world,
                int group, const std::string& master_addr, const std::string& master_port) {
  EXPECT_EQ(rank.env.at("RANK"), std::to_string(r));
  EXPECT_EQ(rank.env.at("LOCAL_RANK"), std::to_string(local_rank));
  EXPECT_EQ(rank.env.at("LOCAL_WORLD_SIZE"), std::to_string(local_world));
  EXPECT_EQ(rank.env.at("WORLD_SIZE"), std::to_string(world));
  EXPECT_EQ(rank.env.at("GROUP_RANK"), std::to_string(group));
  EXPECT_EQ(rank.env.at("MASTER_ADDR"), master_addr);
  EXPECT_EQ(rank.env.at("MASTER_PORT"), master_port);
}

TEST(ClusterSpecsPlanTest, Local) {
  std::vector<Layout> ranks = Ranks("local.toml");
  ASSERT_EQ(ranks.size(), 2u);
  for (int r = 0; r < 2; ++r) ExpectRank(ranks[r], r, r, 2, 2, 0, "127.0.0.1", "29500");
  EXPECT_EQ(ranks[0].env.at("OMP_NUM_THREADS"), "1");
  EXPECT_EQ(ranks[0].env.count("CUDA_VISIBLE_DEVICES"), 0u);
}

TEST(ClusterSpecsPlanTest, Lambda2x2) {
  std::vector<Layout> ranks = Ranks("lambda-2x2.toml");
  ASSERT_EQ(ranks.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    ExpectRank(ranks[r], r, r % 2, 2, 4, r / 2, "104.171.200.62", "1234");
    EXPECT_EQ(ranks[r].env.at("CUDA_VISIBLE_DEVICES"), "0,1");
    EXPECT_EQ(ranks[r].env.at("NCCL_IB_DISABLE"), "1");
    EXPECT_EQ(ranks[r].env.at("NCCL_DEBUG"), "INFO");
  }
  EXPECT_EQ(ranks[2].node, "worker-0");
}

TEST(ClusterSpecsPlanTest, AutoDist3Node) {
  std::vector<Layout> ranks = Ranks("autodist-3node.toml");
  ASSERT_EQ(ranks.size(), 10u);  // 4 + 4 + 2
  const int group_of[] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2};
  const int first_of[] = {0, 4, 8};
  const int local_world_of[] = {4, 4, 2};
  for (int r = 0; r < 10; ++r) {
    int group = group_of[r];
    ExpectRank(ranks[r], r, r - first_of[group], local_world_of[group], 10, group,
               "172.31.30.187", "29500");
  }
  // The conda group's env reaches its node only.
  EXPECT_EQ(ranks[8].env.at("LD_LIBRARY_PATH"), "$LD_LIBRARY_PATH:/usr/local/cuda/lib64");
  EXPECT_EQ(ranks[0].env.count("LD_LIBRARY_PATH"), 0u);
  EXPECT_EQ(ranks[4].env.count("LD_LIBRARY_PATH"), 0u);
  EXPECT_EQ(ranks[9].env.at("CUDA_VISIBLE_DEVICES"), "0,1");
}

TEST(ClusterSpecsPlanTest, Aws2x8UsesPrivateAddresses) {
  std::vector<Layout> ranks = Ranks("aws-2x8.toml");
  ASSERT_EQ(ranks.size(), 16u);
  for (int r = 0; r < 16; ++r) {
    ExpectRank(ranks[r], r, r % 8, 8, 16, r / 8, "172.31.5.10", "23456");
    EXPECT_EQ(ranks[r].env.at("NCCL_SOCKET_IFNAME"), "ens3");
    EXPECT_EQ(ranks[r].env.at("CUDA_VISIBLE_DEVICES"), "0,1,2,3,4,5,6,7");
  }
}

TEST(ClusterSpecsPlanTest, Jetstream2x1) {
  std::vector<Layout> ranks = Ranks("jetstream-2x1.toml");
  ASSERT_EQ(ranks.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    ExpectRank(ranks[r], r, 0, 1, 2, r, "149.165.170.10", "29500");
    EXPECT_EQ(ranks[r].env.at("NCCL_IB_DISABLE"), "1");
    EXPECT_EQ(ranks[r].env.at("NCCL_P2P_DISABLE"), "1");
    EXPECT_EQ(ranks[r].env.count("OMP_NUM_THREADS"), 0u);
  }
}

TEST(ClusterSpecsPlanTest, DockerCi) {
  std::vector<Layout> ranks = Ranks("docker-ci.toml");
  ASSERT_EQ(ranks.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    ExpectRank(ranks[r], r, 0, 1, 3, r, "fleetplan-ci-0", "29500");
    EXPECT_EQ(ranks[r].node, "fleetplan-ci-" + std::to_string(r));
  }
}

}  // namespace
}  // namespace fleetplan
