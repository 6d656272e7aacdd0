#include "tools/cli/paths.h"

#include <stdlib.h>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

TEST(PathsTest, ResolvesAgainstWhereTheUserRanBazel) {
  setenv("BUILD_WORKING_DIRECTORY", "/home/me/proj", 1);
  EXPECT_EQ(ResolveUserPath("specs/a.toml"), "/home/me/proj/specs/a.toml");
  EXPECT_EQ(ResolveUserPath("/abs/a.toml"), "/abs/a.toml");
  unsetenv("BUILD_WORKING_DIRECTORY");
  EXPECT_EQ(ResolveUserPath("a.toml").front(), '/');
}

TEST(PathsTest, WorkspacePrefersBazelsVariable) {
  setenv("BUILD_WORKSPACE_DIRECTORY", "/ws", 1);
  EXPECT_EQ(WorkspaceDirectory("/other"), "/ws");
  unsetenv("BUILD_WORKSPACE_DIRECTORY");
  EXPECT_EQ(WorkspaceDirectory("/other"), "/other");
}

TEST(PathsTest, CommandHintsSayHowTheUserRunsFleetplan) {
  setenv("BUILD_WORKSPACE_DIRECTORY", "/ws", 1);
  EXPECT_EQ(CommandHint("status", "a.toml"), "bazel run //tools:status -- a.toml");
  unsetenv("BUILD_WORKSPACE_DIRECTORY");
  EXPECT_EQ(CommandHint("status", "a.toml"), "fleetplan status a.toml");
}

TEST(PathsTest, TheEnclosingWorkspaceIsTheNearestFolderWithAWorkspaceFile) {
  std::string root = MakeTempDir();
  ASSERT_THAT(WriteFileAtomic(root + "/ws/WORKSPACE", "", 0644), IsOk());
  ASSERT_THAT(WriteFileAtomic(root + "/ws/inner/WORKSPACE.bazel", "", 0644), IsOk());
  ASSERT_THAT(MakeDirs(root + "/ws/pkg/sub"), IsOk());
  ASSERT_THAT(MakeDirs(root + "/ws/inner/deep"), IsOk());
  ASSERT_THAT(MakeDirs(root + "/elsewhere"), IsOk());
  EXPECT_EQ(EnclosingWorkspace(root + "/ws/pkg/sub"), root + "/ws");
  EXPECT_EQ(EnclosingWorkspace(root + "/ws"), root + "/ws");
  EXPECT_EQ(EnclosingWorkspace(root + "/ws/inner/deep"), root + "/ws/inner");
  // Nothing under `root` (the temporary folder may itself be in a workspace).
  EXPECT_FALSE(absl::StartsWith(EnclosingWorkspace(root + "/elsewhere"), root));
  EXPECT_EQ(EnclosingWorkspace("/proc/self"), "");
}

TEST(PathsTest, AgentFlagMustBeExecutable) {
  EXPECT_THAT(FindAgent("", "/bin/sh"), IsOk());
  EXPECT_THAT(FindAgent("", "/nonexistent/agent"),
              StatusIs(absl::StatusCode::kNotFound, ::testing::HasSubstr("--agent")));
  unsetenv("RUNFILES_DIR");
  EXPECT_THAT(FindAgent("/nonexistent/apply", ""),
              StatusIs(absl::StatusCode::kNotFound,
                       ::testing::HasSubstr("/nonexistent/apply.runfiles/")));
}

TEST(PathsTest, TheDashboardIsFoundInTheRunfiles) {
  std::string runfiles = MakeTempDir();
  std::string server = runfiles + "/fleetplan/tools/fleetplan-dashboard";
  ASSERT_THAT(MakeDirs(runfiles + "/fleetplan/tools"), IsOk());
  ASSERT_THAT(WriteFileAtomic(server, "#!/bin/sh\n", 0755), IsOk());
  setenv("RUNFILES_DIR", runfiles.c_str(), 1);
  EXPECT_THAT(FindDashboard("/nonexistent/fleetplan"), IsOkAndHolds(server));
  unsetenv("RUNFILES_DIR");
  EXPECT_THAT(FindDashboard("/nonexistent/fleetplan"),
              StatusIs(absl::StatusCode::kNotFound,
                       ::testing::HasSubstr(
                           "/nonexistent/fleetplan.runfiles/fleetplan/tools/fleetplan-dashboard")));
}

}  // namespace
}  // namespace fleetplan
