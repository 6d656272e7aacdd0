#include "tools/util/did_you_mean.h"

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

TEST(DidYouMeanTest, SuggestsTheNearestKey) {
  EXPECT_EQ(DidYouMean("gpu", {"gpus", "cpus", "chief"}), "; did you mean `gpus`?");
  EXPECT_EQ(ClosestMatch("adress", {"address", "private_address"}), "address");
}

TEST(DidYouMeanTest, StaysQuietWhenNothingIsClose) {
  EXPECT_EQ(DidYouMean("zzzzzz", {"gpus", "cpus"}), "");
  EXPECT_EQ(ClosestMatch("x", {}), "");
}

TEST(DidYouMeanTest, PrefersTheSmallestDistance) {
  EXPECT_EQ(ClosestMatch("sssh", {"ssh", "sshd"}), "ssh");
}

}  // namespace
}  // namespace fleetplan
