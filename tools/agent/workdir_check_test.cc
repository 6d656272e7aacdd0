#include "tools/agent/workdir_check.h"

#include <stdlib.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "re2/re2.h"
#include "tools/plan/preflight_script.h"
#include "tools/process/files.h"
#include "tools/process/subprocess.h"
#include "tools/protocol/node_layout.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {
namespace {

// The agent's workdir check says what the plan's shell version (the first
// sync's) says, figures aside: the two must not drift apart.
class WorkdirCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(getenv("TEST_TMPDIR"), "/",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(MakeDirs(dir_).ok());
    setenv("LOGNAME", "tester", 1);  // both read the user from it
  }

  // The check line each way, numbers made "N" (free space moves).
  std::pair<std::string, std::string> BothSay(const std::string& workdir, uint64_t bytes,
                                              int* agent_status, int* shell_status) {
    NodeSpec node;
    node.name = "n";
    node.workdir = workdir;
    std::string agent = CheckWorkdirBeforeSync(workdir, NodeStateDir(node), bytes, agent_status);
    SubprocessOptions shell;
    shell.argv = {"/bin/sh", "-c", WorkdirCheckScript(node, bytes)};
    absl::StatusOr<Completed> ran = RunToCompletion(shell, absl::Seconds(30));
    EXPECT_TRUE(ran.ok()) << ran.status();
    *shell_status = ran.ok() ? ran->status : -1;
    std::string said = ran.ok() ? ran->output : "";
    for (std::string* line : {&agent, &said}) RE2::GlobalReplace(line, "[0-9]+", "N");
    return {agent, said};
  }

  std::string dir_;
};

TEST_F(WorkdirCheckTest, AWritableWorkdirWithRoomIsOkBothWays) {
  int agent_status, shell_status;
  auto [agent, shell] = BothSay(dir_ + "/wd", 1, &agent_status, &shell_status);
  EXPECT_EQ(agent, shell);
  EXPECT_EQ(agent_status, 0);
  EXPECT_EQ(shell_status, 0);
  EXPECT_EQ(agent.rfind("fleetplan-check workdir ok ", 0), 0u) << agent;
}

TEST_F(WorkdirCheckTest, ASyncLargerThanTheDiskFailsBothWays) {
  int agent_status, shell_status;
  auto [agent, shell] = BothSay(dir_ + "/wd", uint64_t{1} << 62, &agent_status, &shell_status);
  EXPECT_EQ(agent, shell);
  EXPECT_EQ(agent_status, 1);
  EXPECT_EQ(shell_status, 1);
  EXPECT_NE(agent.find("fleetplan-check workdir fail "), std::string::npos) << agent;
}

TEST_F(WorkdirCheckTest, AWorkdirThatCannotBeMadeFailsBothWays) {
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/file", "", 0644).ok());
  int agent_status, shell_status;
  auto [agent, shell] = BothSay(dir_ + "/file/wd", 1, &agent_status, &shell_status);
  // Up to why: the system's own words differ (mkdir's, the agent's).
  ASSERT_NE(agent.find("); expected"), std::string::npos) << agent;
  ASSERT_NE(shell.find("); expected"), std::string::npos) << shell;
  EXPECT_EQ(agent.substr(0, agent.find(" (")), shell.substr(0, shell.find(" (")));
  EXPECT_EQ(agent.substr(agent.find("); expected")), shell.substr(shell.find("); expected")));
  EXPECT_EQ(agent_status, 1);
  EXPECT_EQ(shell_status, 1);
}

}  // namespace
}  // namespace fleetplan
