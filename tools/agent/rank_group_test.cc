#include "tools/agent/rank_group.h"

#include <signal.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"

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

// Runs one rank of `program` to its end in `run_dir`; what Explain says.
RankError EndedRank(std::vector<std::string> program, const std::string& run_dir,
                    KernelPaths kernel = {}, const std::function<void()>& while_running = {}) {
  RankGroupOptions options;
  options.node = "n";
  options.first_rank = 3;
  options.program = std::move(program);
  options.run_dir = run_dir;
  options.kernel_paths = std::move(kernel);
  RankGroup group(options);
  group.Start();
  if (while_running) while_running();
  absl::Time start = absl::Now();
  while (group.Check() == RankGroup::Progress::kRunning && absl::Now() - start < absl::Minutes(2)) {
    group.Pump({}, absl::Milliseconds(100));
  }
  return group.Explain(3);
}

// A signal is named from the wait status; a script's `exit 137` is no
// SIGKILL.
TEST(RankGroupTest, ARankEndedByASignalIsNamedFromTheWaitNotFromItsStatus) {
  std::string dir = std::string(std::getenv("TEST_TMPDIR"));
  RankError killed = EndedRank({"/bin/sh", "-c", "kill -KILL $$"}, dir + "/a");
  EXPECT_EQ(killed.death.signal, SIGKILL);
  EXPECT_FALSE(killed.death.oom_killed) << "no OOM kill was counted";
  EXPECT_GT(killed.death.peak_rss_bytes, 0u);
  EXPECT_EQ(DescribeRankDeath(killed.death), "killed by SIGKILL (signal 9)");
  RankError exited = EndedRank({"/bin/sh", "-c", "exit 137"}, dir + "/b");
  EXPECT_EQ(exited.death.signal, 0);
  EXPECT_EQ(DescribeRankDeath(exited.death), "");
  RankError segv = EndedRank({"/bin/sh", "-c", "ulimit -c 0; kill -SEGV $$"}, dir + "/c");
  EXPECT_EQ(DescribeRankDeath(segv.death), "killed by SIGSEGV (signal 11)");
}

// The OOM killer's count in the rank's cgroup rose while it ran, and it
// ended by SIGKILL: the OOM killer's, with the cgroup's limit. The cgroup
// files are the test's own (the real /proc names a path they do not hold,
// so they are read as a container's own cgroup); memory_cgroup_test makes
// a real OOM kill.
TEST(RankGroupTest, ARankTheOomKillerEndedSaysSoWithItsLimit) {
  std::string tmp = std::string(std::getenv("TEST_TMPDIR"));
  std::string cgroups = tmp + "/cgroup";
  ASSERT_TRUE(MakeDirs(cgroups + "/memory").ok());
  // v1 under memory/, v2 at the root: whichever this machine's /proc names.
  auto count = [&](int kills) {
    ASSERT_TRUE(WriteFileAtomic(cgroups + "/memory/memory.oom_control",
                                absl::StrCat("oom_kill ", kills, "\n"), 0644)
                    .ok());
    ASSERT_TRUE(
        WriteFileAtomic(cgroups + "/memory.events", absl::StrCat("oom_kill ", kills, "\n"), 0644)
            .ok());
  };
  count(4);
  ASSERT_TRUE(WriteFileAtomic(cgroups + "/memory/memory.limit_in_bytes", "67108864\n", 0644).ok());
  ASSERT_TRUE(WriteFileAtomic(cgroups + "/memory.max", "67108864\n", 0644).ok());
  std::string gate = tmp + "/oom-go";
  RankError error = EndedRank(
      {"/bin/sh", "-c", "while [ ! -e " + gate + " ]; do sleep 0.01; done; kill -KILL $$"},
      tmp + "/oom", KernelPaths{"/proc", cgroups}, [&] {
        count(5);
        ASSERT_TRUE(WriteFileAtomic(gate, "", 0644).ok());
      });
  EXPECT_EQ(error.death.signal, SIGKILL);
  EXPECT_TRUE(error.death.oom_killed);
  EXPECT_EQ(error.death.memory_limit_bytes, 64u << 20);
  EXPECT_THAT(DescribeRankDeath(error.death),
              ::testing::MatchesRegex("killed by SIGKILL \\(signal 9\\); the kernel's OOM killer "
                                      "ended it: peak RSS .* of a 64.0 MiB limit"));
}

}  // namespace
}  // namespace fleetplan
