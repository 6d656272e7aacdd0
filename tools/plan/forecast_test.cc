#include "tools/plan/forecast.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;

Step MakeStep(PhaseKind phase, const std::string& node, StepKind kind) {
  Step step;
  step.phase = phase;
  step.node = node;
  step.kind = kind;
  step.hash = std::string(PhaseName(phase)) + "-" + node;
  if (kind == StepKind::kSyncTree) step.inputs = {{"source", "/src"}};
  return step;
}

// Two nodes, a and b, with a step each in environment, preflight and
// launch, and a sync step each.
Plan TwoNodePlan() {
  Plan plan;
  for (PhaseKind kind : {PhaseKind::kSync, PhaseKind::kEnvironment, PhaseKind::kPreflight,
                         PhaseKind::kLaunch}) {
    Phase& phase = plan.phases.emplace_back();
    phase.kind = kind;
    StepKind step_kind = kind == PhaseKind::kSync          ? StepKind::kSyncTree
                         : kind == PhaseKind::kEnvironment ? StepKind::kWriteEnv
                         : kind == PhaseKind::kPreflight   ? StepKind::kCheck
                                                           : StepKind::kLaunchAgent;
    for (const char* node : {"a", "b"}) phase.steps.push_back(MakeStep(kind, node, step_kind));
  }
  return plan;
}

// A node that holds everything `plan` would leave there, tree unchanged.
NodeState Applied(const Plan& plan, const std::string& node) {
  NodeState state;
  state.tree_recorded = true;
  state.manifest_recorded = true;
  for (const Phase& phase : plan.phases) {
    for (const Step& step : phase.steps) {
      if (step.node == node) state.records[step.phase] = step.hash;
    }
  }
  return state;
}

std::string Markers(const std::vector<StepForecast>& forecast) {
  std::string markers;
  for (const StepForecast& step : forecast) markers += ChangeMarker(step.change);
  return markers;
}

TEST(ForecastTest, NothingRecordedAddsEverything) {
  Plan plan = TwoNodePlan();
  std::map<std::string, NodeState> nodes;
  nodes["a"].files_to_send = 3;
  nodes["a"].bytes_to_send = 30;
  std::vector<StepForecast> forecast = ForecastPlan(plan, nodes, "");
  EXPECT_EQ(Markers(forecast), "++++++++");
  EXPECT_EQ(forecast[0].note, "sends all 3 files, 30 bytes");
}

TEST(ForecastTest, EverythingRecordedAndTheTreeUnchangedChangesNothing) {
  Plan plan = TwoNodePlan();
  std::map<std::string, NodeState> nodes{{"a", Applied(plan, "a")}, {"b", Applied(plan, "b")}};
  EXPECT_EQ(Markers(ForecastPlan(plan, nodes, "")), "========");
}

// With [secrets], the environment's record joins the values' keyed digest:
// the same values change nothing (plan --refresh said "~" for every
// environment step before), another value changes that step and the
// launch after it.
TEST(ForecastTest, TheSameSecretsChangeNothingAndAnotherValueChangesTheEnvironment) {
  Plan plan = TwoNodePlan();
  std::map<std::string, NodeState> nodes{{"a", Applied(plan, "a")}, {"b", Applied(plan, "b")}};
  for (auto& [name, state] : nodes) {
    for (const Step& step : plan.phases[1].steps) {
      if (step.node == name) state.records[step.phase] = RecordedHash(step, "digest-1");
    }
  }
  EXPECT_EQ(Markers(ForecastPlan(plan, nodes, "digest-1")), "========");
  EXPECT_EQ(Markers(ForecastPlan(plan, nodes, "digest-2")), "==~~~~~~");
  EXPECT_NE(RecordedHash(plan.phases[1].steps[0], "digest-1"), plan.phases[1].steps[0].hash);
  EXPECT_EQ(RecordedHash(plan.phases[0].steps[0], "digest-1"), plan.phases[0].steps[0].hash);
}

TEST(ForecastTest, AChangedFileOnOneNodeRunsPreflightAndLaunchEverywhere) {
  Plan plan = TwoNodePlan();
  std::map<std::string, NodeState> nodes{{"a", Applied(plan, "a")}, {"b", Applied(plan, "b")}};
  nodes["b"].files_to_send = 1;
  nodes["b"].bytes_to_send = 12;
  nodes["b"].files_to_remove = 2;
  std::vector<StepForecast> forecast = ForecastPlan(plan, nodes, "");
  EXPECT_EQ(Markers(forecast), "=~==~~~~");
  EXPECT_EQ(forecast[1].note, "sends 1 files, 12 bytes; removes 2");
  EXPECT_EQ(forecast[4].note, "runs again: an earlier step changes");
}

TEST(ForecastTest, ALaunchNotRecordedOnOneNodeRerunsPreflightAndLaunchOnAll) {
  // As after a job that failed: the sources and environment stand.
  Plan plan = TwoNodePlan();
  std::map<std::string, NodeState> nodes{{"a", Applied(plan, "a")}, {"b", Applied(plan, "b")}};
  nodes["b"].records.erase(PhaseKind::kLaunch);
  std::vector<StepForecast> forecast = ForecastPlan(plan, nodes, "");
  EXPECT_EQ(Markers(forecast), "====~~~+");
  EXPECT_EQ(forecast[4].note, "runs again: not done on every node");
  EXPECT_EQ(forecast[6].note, "runs again: an earlier step changes");
}

TEST(ForecastTest, AnEnvironmentRecordedWithAnotherHashChanges) {
  Plan plan = TwoNodePlan();
  std::map<std::string, NodeState> nodes{{"a", Applied(plan, "a")}, {"b", Applied(plan, "b")}};
  nodes["a"].records[PhaseKind::kEnvironment] = "from an older spec";
  EXPECT_EQ(Markers(ForecastPlan(plan, nodes, "")), "==~=~~~~");
}

TEST(ForecastTest, ASyncOfTheAgentAloneIsAddedOnceAndThenDecidedDuringApply) {
  Plan plan = TwoNodePlan();
  for (Step& step : plan.phases[0].steps) step.inputs = {{"files", "the launch agent"}};
  std::map<std::string, NodeState> nodes = {{"a", Applied(plan, "a")}, {"b", {}}};
  nodes["a"].tree_recorded = false;  // no source tree: the agent alone
  std::vector<StepForecast> forecast = ForecastPlan(plan, nodes, "");
  EXPECT_EQ(forecast[0].change, Change::kUnknown);
  EXPECT_EQ(forecast[0].note, "changes only if the agent or the program does");
  EXPECT_EQ(forecast[1].change, Change::kAdd);
  EXPECT_EQ(forecast[1].note, "sends the launch agent");
}

TEST(ForecastTest, BuildAndARecordedKeyAreDecidedDuringApply) {
  Plan plan;
  Phase& build = plan.phases.emplace_back();
  build.kind = PhaseKind::kBuild;
  build.steps.push_back(MakeStep(PhaseKind::kBuild, std::string(kControllerNode), StepKind::kBazelBuild));
  Phase& keys = plan.phases.emplace_back();
  keys.kind = PhaseKind::kKeys;
  keys.steps.push_back(MakeStep(PhaseKind::kKeys, "a", StepKind::kEnsureKey));
  keys.steps.push_back(MakeStep(PhaseKind::kKeys, "b", StepKind::kAuthorizeKey));
  keys.steps.push_back(MakeStep(PhaseKind::kKeys, "c", StepKind::kAuthorizeKey));
  std::map<std::string, NodeState> nodes;
  nodes["a"].records[PhaseKind::kKeys] = keys.steps[0].hash;
  nodes["b"].records[PhaseKind::kKeys] = "hash of step and key";
  std::vector<StepForecast> forecast = ForecastPlan(plan, nodes, "");
  EXPECT_EQ(Markers(forecast), "?=?+");
  EXPECT_EQ(forecast[0].note, "runs; changes only if the program does");
  EXPECT_EQ(forecast[2].note, "unchanged if the chief's key is");
}

}  // namespace
}  // namespace fleetplan
