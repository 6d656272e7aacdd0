#include "tools/plan/render.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/plan/compile.h"
#include "tools/plan/test_specs.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(RenderPlanTextTest, TwoByTwo) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(TwoByTwoSpec(), {"abc"}));
  EXPECT_EQ(RenderPlanText(plan, /*color=*/false),
            R"(fleetplan will perform these steps for 'resnet-2x2' (/home/me/fleetplan/cluster_specs/lambda.toml):

build
  + (controller)  bazel-build    bazel build //trainer:train
keys
  + worker        authorize-key  accept the key of 'head'
  + head          ensure-key     create ~/.ssh/id_ed25519 if missing, read its public key
sync
  + worker        sync-tree      sync /home/me/fleetplan -> /home/ubuntu/project (exclude .git,bazel-*,*.pt)
  + head          sync-tree      sync /home/me/fleetplan -> /home/ubuntu/project (exclude .git,bazel-*,*.pt)
environment
  + worker        write-env      write /home/ubuntu/project/.fleetplan/nodes/worker/env.sh
  + head          write-env      write /home/ubuntu/project/.fleetplan/nodes/head/env.sh
preflight
  + worker        check          check workdir=/home/ubuntu/project, connect=10.0.0.5:29500,29501, gpus=0,1, python=venv /home/ubuntu/venvs/train, program=/home/ubuntu/project/.fleetplan/bin/train, nccl_socket_ifname=auto
  + head          check          check workdir=/home/ubuntu/project, master_port=29500, supervisor_port=29501, connect=10.0.0.5:29500,29501, gpus=0,1, python=venv /home/ubuntu/venvs/train, program=/home/ubuntu/project/.fleetplan/bin/train, nccl_socket_ifname=auto
launch
  + worker        launch-agent   start ranks 0-1
  + head          launch-agent   start ranks 2-3

ranks
  node 'worker' (104.171.200.182): ranks 0-1
  node 'head' (104.171.200.62): ranks 2-3
  NCCL_SOCKET_IFNAME=auto (resolved per node by preflight: the interface that holds the node's private_address, else its address)

Plan: 11 steps on 2 nodes, 4 ranks.
)");
}

TEST(RenderPlanTextTest, EmptyPhasesSayNoChangesAndTheAgentIsSentWithoutSync) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(ThreeNodeSpec(), {}));
  std::string text = RenderPlanText(plan, /*color=*/false);
  EXPECT_THAT(text, HasSubstr("\nbuild: no changes\nkeys: no changes\nsync\n"
                              "  + n0  sync-tree      send the launch agent -> "
                              "/home/ubuntu/project\n"));
  EXPECT_THAT(text, HasSubstr("  node 'n0' (10.1.0.1): rank 0\n"));
  EXPECT_THAT(text, HasSubstr("  node 'n2' (10.1.0.3): ranks 3-5\n"));
  EXPECT_THAT(text, HasSubstr("\nPlan: 12 steps on 3 nodes, 6 ranks.\n"));
  EXPECT_THAT(text, Not(HasSubstr("NCCL_SOCKET_IFNAME")));
}

TEST(RenderPlanTextTest, AnElasticJobShowsItsPolicyAndItsSpare) {
  ClusterSpec spec = ThreeNodeSpec();
  spec.nodes[2].spare = true;
  spec.job.min_nodes = 1;
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec, {}));
  std::string text = RenderPlanText(plan, /*color=*/false);
  EXPECT_THAT(text, HasSubstr("  + n0  launch-agent   start rank 0 (elastic: min_nodes=1, "
                              "max_node_losses=any, rejoin=restart, spares=n2)\n"));
  EXPECT_THAT(text, HasSubstr("  + n2  launch-agent   start the agent as a spare: no rank until "
                              "another node is lost\n"));
  EXPECT_THAT(text, HasSubstr("  node 'n1' (10.1.0.2): ranks 1-2\n"
                              "  node 'n2': spare (no rank until it takes a lost node's place)\n"));
  EXPECT_THAT(text, HasSubstr("\nPlan: 12 steps on 3 nodes, 3 ranks.\n"));
}

TEST(RenderPlanTextTest, ColourOnlyWhenAsked) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(TwoByTwoSpec(), {}));
  EXPECT_THAT(RenderPlanText(plan, false), Not(HasSubstr("\x1b[")));
  std::string colored = RenderPlanText(plan, true);
  EXPECT_THAT(colored, HasSubstr("\x1b[32m+\x1b[0m worker"));
  EXPECT_THAT(colored, HasSubstr("\x1b[1mlaunch\x1b[0m\n"));
}

}  // namespace
}  // namespace fleetplan
