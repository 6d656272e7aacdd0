#include "tools/agent/stack_collector.h"

#include <sys/stat.h>
#include <unistd.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/process/subprocess.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A Python rank blocked in a function of its own, started as the agent
// starts ranks; ready once it has printed.
class BlockedRank {
 public:
  BlockedRank() {
    std::string script = MakeTempDir() + "/blocked.py";
    EXPECT_TRUE(WriteFileAtomic(script,
                                "import time\n"
                                "def load_shard():\n"
                                "    print('ready', flush=True)\n"
                                "    time.sleep(1000)\n"
                                "load_shard()\n",
                                0644)
                    .ok());
    SubprocessOptions options;
    options.argv = {"/usr/bin/python3", script};
    process_ = *Subprocess::Start(options);
    std::string out;
    absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (out.find("ready") == std::string::npos && absl::Now() < deadline) {
      PumpOutput({process_.get()}, {}, absl::Milliseconds(100),
                 [&](size_t, absl::string_view chunk) { out.append(chunk.data(), chunk.size()); });
    }
  }
  pid_t pid() const { return process_->pid(); }
  bool running() { return !process_->TryWait().has_value(); }

 private:
  std::unique_ptr<Subprocess> process_;
};

TEST(StackCollectorTest, ReadsWhereAPythonRankWaitsAndLeavesItRunning) {
  BlockedRank rank;
  std::string dir = MakeTempDir();
  std::string path = dir + "/rank-3.stacks-0.txt";
  std::vector<RankStack> stacks = CollectRankStacks("a", {{3, rank.pid(), path}}, {});
  ASSERT_EQ(stacks.size(), 1u);
  EXPECT_EQ(stacks[0].rank, 3);
  EXPECT_EQ(stacks[0].node, "a");
  EXPECT_THAT(stacks[0].skips, ElementsAre()) << "install gdb, elfutils and python3.11-dbg "
                                                 "(tools/install-deps.sh)";
  EXPECT_EQ(DescribeWhere(stacks[0].where), "load_shard (blocked.py:4) calling sleep");
  absl::StatusOr<std::string> text = ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  EXPECT_THAT(*text, HasSubstr("in load_shard"));
  EXPECT_THAT(*text, HasSubstr("clock_nanosleep"));
  struct stat info;
  ASSERT_EQ(stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_TRUE(rank.running());  // looked at, not harmed
}

TEST(StackCollectorTest, AMissingToolIsANamedSkip) {
  BlockedRank rank;
  StackCollectorOptions options;
  options.gdb = {"fleetplan-no-such-gdb"};
  options.eu_stack = {"fleetplan-no-such-eu-stack"};
  std::vector<RankStack> stacks = CollectRankStacks("b", {{1, rank.pid(), ""}}, options);
  ASSERT_EQ(stacks.size(), 1u);
  EXPECT_FALSE(stacks[0].where.has_value());
  EXPECT_THAT(stacks[0].skips,
              ElementsAre("py-bt: fleetplan-no-such-gdb was not found on PATH",
                          "native: fleetplan-no-such-eu-stack was not found on PATH"));
}

TEST(StackCollectorTest, ARankThatIsGoneIsASkip) {
  std::vector<RankStack> stacks = CollectRankStacks("c", {{0, 999999999, ""}}, {});
  ASSERT_EQ(stacks.size(), 1u);
  EXPECT_THAT(stacks[0].skips, ElementsAre("its process 999999999 is gone"));
}

}  // namespace
}  // namespace fleetplan
