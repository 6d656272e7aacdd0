#include "tools/agent/unproven_admission.h"

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1000);

TEST(UnprovenAdmissionTest, AdmitsWhileThereIsRoom) {
  EXPECT_EQ(AdmitUnproven(0, std::nullopt, kNow), Admission::kAdmit);
  EXPECT_EQ(AdmitUnproven(kMaxUnproven - 1, kNow, kNow), Admission::kAdmit);
}

// A burst accepted back to back must not cut off a connection whose
// first bytes were not even read yet: the newcomer is refused instead.
TEST(UnprovenAdmissionTest, RefusesANewcomerWhileEveryOneIsInItsGrace) {
  EXPECT_EQ(AdmitUnproven(kMaxUnproven, kNow - absl::Microseconds(300), kNow),
            Admission::kRefuse);
  EXPECT_EQ(AdmitUnproven(kMaxUnproven, kNow - kUnprovenGrace + absl::Milliseconds(1), kNow),
            Admission::kRefuse);
}

// A silent stranger holds its place for the grace, not longer.
TEST(UnprovenAdmissionTest, CutsOffTheOldestOnceItHadItsGrace) {
  EXPECT_EQ(AdmitUnproven(kMaxUnproven, kNow - kUnprovenGrace, kNow),
            Admission::kAdmitCuttingOffOldest);
  EXPECT_EQ(AdmitUnproven(kMaxUnproven + 3, kNow - absl::Minutes(1), kNow),
            Admission::kAdmitCuttingOffOldest);
}

}  // namespace
}  // namespace fleetplan
