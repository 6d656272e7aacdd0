#include "tools/protocol/node_layout.h"

#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

NodeSpec Node(std::string name, std::string workdir) {
  NodeSpec node;
  node.name = std::move(name);
  node.workdir = std::move(workdir);
  return node;
}

// Every path as earlier applies left it on the nodes: these must not change.
TEST(NodeLayoutTest, ThePathsNodesHold) {
  NodeSpec node = Node("head", "/home/ubuntu/project");
  EXPECT_EQ(AgentPath(node), "/home/ubuntu/project/.fleetplan/bin/fleetplan-agent");
  EXPECT_EQ(BinPath(node, "train"), "/home/ubuntu/project/.fleetplan/bin/train");
  EXPECT_EQ(NodeStateDir(node), "/home/ubuntu/project/.fleetplan/nodes/head");
  EXPECT_EQ(EnvScriptPath(node), "/home/ubuntu/project/.fleetplan/nodes/head/env.sh");
  EXPECT_EQ(PreflightEnvPath(node),
            "/home/ubuntu/project/.fleetplan/nodes/head/preflight.env");
  EXPECT_EQ(SyncManifestPath(node), "/home/ubuntu/project/.fleetplan/nodes/head/manifest");
  EXPECT_EQ(StepRecordPath(node, "preflight"),
            "/home/ubuntu/project/.fleetplan/nodes/head/steps/preflight");
  EXPECT_EQ(NodeLogDir(node), "/home/ubuntu/project/.fleetplan/nodes/head/logs");
}

TEST(NodeLayoutTest, PathsRelativeToTheirFolder) {
  EXPECT_EQ(BinRelativePath(kAgentFileName), ".fleetplan/bin/fleetplan-agent");
  EXPECT_EQ(StepRecordName("launch"), "steps/launch");
}

TEST(NodeLayoutTest, AWorkdirWithATrailingSlashOrAtTheRoot) {
  EXPECT_EQ(NodeStateDir(Node("a", "/w/")), "/w/.fleetplan/nodes/a");
  EXPECT_EQ(AgentPath(Node("a", "/")), "/.fleetplan/bin/fleetplan-agent");
  EXPECT_EQ(UnderWorkdir(Node("a", "/w"), "./data"), "/w/data");
}

}  // namespace
}  // namespace fleetplan
