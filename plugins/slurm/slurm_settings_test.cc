#include "plugins/slurm/slurm_settings.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/spec/spec_parser.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kPath[] = "/specs/slurm.toml";

constexpr char kHead[] = R"(name = "s"
[defaults]
transport = "slurm"
workdir = "/shared/job"
[job]
program = "./train"
[slurm]
)";

std::string ErrorOf(const std::string& slurm_lines) {
  absl::StatusOr<ClusterSpec> spec = ParseSpec(std::string(kHead) + slurm_lines, kPath);
  EXPECT_FALSE(spec.ok());
  return spec.ok() ? "" : std::string(spec.status().message());
}

TEST(SlurmSettingsTest, ACountGivesPlaceholderNodesTheFirstOfWhichIsChief) {
  FP_ASSERT_OK_AND_ASSIGN(
      ClusterSpec spec,
      ParseSpec(std::string(kHead) + "partition = \"gpu\"\nnodes = 3\ntime = \"1-02:00:00\"\n"
                                     "account = \"ml\"\ngpus_per_node = 8\n"
                                     "sbatch = [\"--qos=high\"]\n",
                kPath));
  ASSERT_EQ(spec.nodes.size(), 3u);
  EXPECT_EQ(spec.nodes[0].name, "slurm-0");
  EXPECT_EQ(spec.nodes[2].address, "slurm-2");
  EXPECT_TRUE(spec.nodes[0].chief);
  EXPECT_FALSE(spec.nodes[1].chief);
  EXPECT_EQ(spec.nodes[1].transport, "slurm");
  EXPECT_EQ(spec.nodes[1].workdir, "/shared/job");
  const SlurmSettings& settings = SlurmSettingsOf(spec);
  EXPECT_EQ(settings.partition, "gpu");
  EXPECT_EQ(settings.time, "1-02:00:00");
  EXPECT_EQ(settings.account, "ml");
  EXPECT_EQ(settings.gpus_per_node, 8);
  EXPECT_THAT(settings.sbatch, ElementsAre("--qos=high"));
}

// `salloc` is the older name of the same list; one of the two, not both.
TEST(SlurmSettingsTest, AllocationOptionsUnderEitherNameOnce) {
  FP_ASSERT_OK_AND_ASSIGN(
      ClusterSpec spec,
      ParseSpec(std::string(kHead) + "nodes = 2\nsalloc = [\"--exclusive\"]\n", kPath));
  EXPECT_THAT(SlurmSettingsOf(spec).sbatch, ElementsAre("--exclusive"));
  EXPECT_THAT(ErrorOf("nodes = 2\nsbatch = [\"--qos=a\"]\nsalloc = [\"--qos=b\"]\n"),
              HasSubstr("slurm.toml:10:10: error: slurm.salloc: give the allocation options "
                        "once, as slurm.sbatch"));
  EXPECT_THAT(ErrorOf("nodes = 2\nsbatch = [\"qos=a\"]\n"),
              HasSubstr("slurm.toml:9:10: error: slurm.sbatch: \"qos=a\" is not an option"));
}

TEST(SlurmSettingsTest, NamedNodesNeedNoCount) {
  FP_ASSERT_OK_AND_ASSIGN(
      ClusterSpec spec,
      ParseSpec(std::string(kHead) + "partition = \"debug\"\n[[nodes]]\naddress = \"n1\"\n"
                                     "chief = true\n[[nodes]]\naddress = \"n2\"\n",
                kPath));
  ASSERT_EQ(spec.nodes.size(), 2u);
  EXPECT_EQ(spec.nodes[1].name, "n2");
  EXPECT_EQ(SlurmSettingsOf(spec).nodes, 0);
}

TEST(SlurmSettingsTest, ACountAndNamedNodesTogetherAreRefused) {
  std::string error = ErrorOf("nodes = 2\n[[nodes]]\naddress = \"n1\"\n");
  EXPECT_THAT(error, HasSubstr("/specs/slurm.toml:9:1"));
  EXPECT_THAT(error, HasSubstr("give a count or name the nodes in [[nodes]], not both"));
}

// Slurm reads "no limit" in any case, and -1 too (time_str2secs).
TEST(SlurmSettingsTest, TimeTakesSlurmsSpellingsInAnyCase) {
  for (const char* time : {"unlimited", "Infinite", "UNLIMITED", "-1", "90", "1-0", "2:30"}) {
    absl::StatusOr<ClusterSpec> spec = ParseSpec(
        absl::StrCat(kHead, "nodes = 2\ntime = \"", time, "\"\n"), kPath);
    ASSERT_THAT(spec, IsOk()) << time;
    EXPECT_EQ(SlurmSettingsOf(*spec).time, time);
  }
  EXPECT_THAT(ErrorOf("nodes = 3\ntime = \"forever\"\n"), HasSubstr("not a Slurm time limit"));
}

TEST(SlurmSettingsTest, BadValuesAreNamedAtTheirPosition) {
  EXPECT_THAT(ErrorOf("nodes = 3\npartition = \"a b\"\n"),
              HasSubstr("slurm.toml:9:13: error: slurm.partition: \"a b\" is not a Slurm"));
  EXPECT_THAT(ErrorOf("nodes = 3\ntime = \"2h\"\n"),
              HasSubstr("slurm.toml:9:8: error: slurm.time: \"2h\" is not a Slurm time limit"));
  EXPECT_THAT(ErrorOf("nodes = -1\n"), HasSubstr("slurm.toml:8:9: error: slurm.nodes: -1 is out"));
  EXPECT_THAT(ErrorOf("nodes = 3\ngpus_per_node = 2.5\n"),
              HasSubstr("slurm.toml:9:17: error: slurm.gpus_per_node: expected an integer"));
  EXPECT_THAT(ErrorOf("nodes = 3\nsalloc = \"--qos=x\"\n"),
              HasSubstr("slurm.toml:9:10: error: slurm.salloc: expected"));
  EXPECT_THAT(ErrorOf("nodes = 3\ngpus = 2\n"),
              HasSubstr("slurm.gpus: unknown key"));
}

TEST(SlurmSettingsTest, DescribeCoversEverySetting) {
  SlurmSettings settings;
  std::vector<std::string> names;
  for (const auto& [name, value] : settings.Describe()) names.push_back(name);
  EXPECT_THAT(names, ElementsAre("slurm.partition", "slurm.nodes", "slurm.time", "slurm.account",
                                 "slurm.gpus_per_node", "slurm.sbatch"));
}

}  // namespace
}  // namespace fleetplan
