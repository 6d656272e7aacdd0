#include "tools/agent/rank_group.h"

#include <cstdlib>
#include <string>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

// A rank's pipes close before its exit can be reaped: the group must see
// the exit soon after, not at the end of a poll that nothing else wakes.
// This rank closes its output at once and exits 100 ms later.
TEST(RankGroupTest, ARankThatClosedItsOutputIsSeenExitingWithoutWaitingOutThePoll) {
  RankGroupOptions options;
  options.node = "n";
  options.program = {"/bin/sh", "-c", "exec >/dev/null 2>&1; sleep 0.1"};
  options.run_dir = std::string(std::getenv("TEST_TMPDIR"));
  RankGroup group(options);
  group.Start();
  absl::Time start = absl::Now();
  RankGroup::Progress progress = RankGroup::Progress::kRunning;
  while (progress == RankGroup::Progress::kRunning && absl::Now() - start < absl::Seconds(30)) {
    group.Pump({}, absl::Seconds(10));
    progress = group.Check();
  }
  EXPECT_EQ(progress, RankGroup::Progress::kSucceeded);
  // Without the look every millisecond after the output ended: 10 s (the
  // look lasts 2 s: the 100 ms still hold on a loaded machine).
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

}  // namespace
}  // namespace fleetplan
