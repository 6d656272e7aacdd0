// Every example spec under cluster_specs/ parses cleanly and has the shape
// of the guide it stands for.

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "plugins/docker/docker_settings.h"
#include "tools/spec/spec_parser.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

ClusterSpec Load(const std::string& name) {
  std::string path = std::string(std::getenv("TEST_SRCDIR")) + "/fleetplan/cluster_specs/" + name;
  absl::StatusOr<ClusterSpec> spec = LoadSpecFile(path);
  EXPECT_THAT(spec, IsOk()) << name;
  return spec.ok() ? *spec : ClusterSpec{};
}

TEST(ClusterSpecsTest, LocalDemo) {
  ClusterSpec spec = Load("local.toml");
  ASSERT_EQ(spec.nodes.size(), 1u);
  EXPECT_EQ(spec.nodes[0].transport, "local");
  EXPECT_EQ(spec.nodes[0].nproc, 2);
  EXPECT_EQ(spec.job.program, "//trainer:train");
}

TEST(ClusterSpecsTest, Lambda) {
  ClusterSpec spec = Load("lambda-2x2.toml");
  ASSERT_EQ(spec.nodes.size(), 2u);
  EXPECT_TRUE(spec.keys.distribute);
  EXPECT_EQ(spec.network.ib, false);
  EXPECT_EQ(spec.nodes[1].nproc, 2);
}

TEST(ClusterSpecsTest, AutoDist) {
  ClusterSpec spec = Load("autodist-3node.toml");
  ASSERT_EQ(spec.nodes.size(), 3u);
  EXPECT_EQ(spec.Settings("ssh")->GroupNames().size(), 2u);
  EXPECT_EQ(spec.nodes[1].python.kind, PythonEnv::Kind::kVenv);
  EXPECT_EQ(spec.nodes[2].python.kind, PythonEnv::Kind::kConda);
  EXPECT_EQ(spec.nodes[2].nproc, 2);
}

TEST(ClusterSpecsTest, Aws) {
  ClusterSpec spec = Load("aws-2x8.toml");
  ASSERT_EQ(spec.nodes.size(), 2u);
  EXPECT_NE(spec.nodes[0].address, spec.nodes[0].private_address);
  EXPECT_EQ(spec.network.nccl_socket_ifname, "ens3");
  EXPECT_EQ(spec.nodes[0].nproc, 8);
}

TEST(ClusterSpecsTest, Jetstream) {
  ClusterSpec spec = Load("jetstream-2x1.toml");
  ASSERT_EQ(spec.nodes.size(), 2u);
  EXPECT_EQ(spec.network.p2p, false);
  EXPECT_EQ(spec.nodes[0].nproc, 1);
}

TEST(ClusterSpecsTest, DockerCi) {
  ClusterSpec spec = Load("docker-ci.toml");
  ASSERT_EQ(spec.nodes.size(), 3u);
  EXPECT_EQ(spec.nodes[2].transport, "docker");
  EXPECT_TRUE(DockerSettingsOf(spec).create);
  EXPECT_EQ(DockerSettingsOf(spec).image, "fleetplan-node:latest");
  EXPECT_EQ(spec.job.program, "//trainer:train");
}

}  // namespace
}  // namespace fleetplan
