#include "tools/plan/plan.h"

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

// Plans show these names, saved plans hold them, and step hashes digest
// them: a change here changes every plan's hashes and re-runs every step.
TEST(PlanTest, StepKindNames) {
  EXPECT_EQ(StepKindName(StepKind::kBazelBuild), "bazel-build");
  EXPECT_EQ(StepKindName(StepKind::kEnsureKey), "ensure-key");
  EXPECT_EQ(StepKindName(StepKind::kAuthorizeKey), "authorize-key");
  EXPECT_EQ(StepKindName(StepKind::kSyncTree), "sync-tree");
  EXPECT_EQ(StepKindName(StepKind::kWriteEnv), "write-env");
  EXPECT_EQ(StepKindName(StepKind::kCheck), "check");
  EXPECT_EQ(StepKindName(StepKind::kLaunchAgent), "launch-agent");
}

TEST(PlanTest, PhaseNames) {
  EXPECT_EQ(PhaseName(PhaseKind::kBuild), "build");
  EXPECT_EQ(PhaseName(PhaseKind::kKeys), "keys");
  EXPECT_EQ(PhaseName(PhaseKind::kSync), "sync");
  EXPECT_EQ(PhaseName(PhaseKind::kEnvironment), "environment");
  EXPECT_EQ(PhaseName(PhaseKind::kPreflight), "preflight");
  EXPECT_EQ(PhaseName(PhaseKind::kLaunch), "launch");
}

}  // namespace
}  // namespace fleetplan
