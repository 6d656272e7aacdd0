#include "tools/cli/saved_plan.h"

#include <stdlib.h>

#include <string>

#include "gtest/gtest.h"
#include "tools/plan/render.h"
#include "tools/process/files.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

Plan SomePlan() {
  Plan plan;
  plan.spec_name = "t";
  plan.spec_path = "/specs/t.toml";
  plan.spec_hash = std::string(32, '1');
  plan.source_hash = std::string(32, '2');
  plan.hash = std::string(32, '3');
  return plan;
}

TEST(SavedPlanTest, SavedPlanReadsBackAndIsCurrent) {
  std::string path = std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") +
                     "/saved.json";
  ASSERT_THAT(SavePlan(SomePlan(), path), IsOk());
  FP_ASSERT_OK_AND_ASSIGN(std::string json, ReadFileToString(path));
  FP_ASSERT_OK_AND_ASSIGN(SavedPlanRef saved, ParseSavedPlan(json));
  EXPECT_EQ(saved.spec_path, "/specs/t.toml");
  EXPECT_THAT(CheckPlanCurrent(saved, SomePlan(), "/src"), IsOk());
  EXPECT_TRUE(LooksLikeSavedPlan(path));
  EXPECT_FALSE(LooksLikeSavedPlan("/specs/t.toml"));
}

TEST(SavedPlanTest, StalePlansAreRefusedWithTheReason) {
  Plan base = SomePlan();
  SavedPlanRef saved{"t", "/specs/t.toml", base.spec_hash, base.source_hash, base.hash};
  Plan spec_changed = SomePlan();
  spec_changed.spec_hash = std::string(32, '4');
  EXPECT_THAT(CheckPlanCurrent(saved, spec_changed, "/src"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("the spec changed since the plan was saved")));
  Plan source_changed = SomePlan();
  source_changed.source_hash = std::string(32, '5');
  EXPECT_THAT(CheckPlanCurrent(saved, source_changed, "/src"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("the sources under /src changed since the plan was saved")));
  Plan other = SomePlan();
  other.hash = std::string(32, '6');
  EXPECT_THAT(CheckPlanCurrent(saved, other, "/src"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("differs")));
}

TEST(SavedPlanTest, UnwritablePathIsNamed) {
  absl::Status status = SavePlan(SomePlan(), "/proc/nope/plan.json");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("/proc/nope/plan.json"));
}

}  // namespace
}  // namespace fleetplan
