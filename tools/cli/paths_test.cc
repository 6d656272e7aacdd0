#include "tools/cli/paths.h"

#include <stdlib.h>

#include "gtest/gtest.h"
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

TEST(PathsTest, AgentFlagMustBeExecutable) {
  EXPECT_THAT(FindAgent("", "/bin/sh"), IsOk());
  EXPECT_THAT(FindAgent("", "/nonexistent/agent"),
              StatusIs(absl::StatusCode::kNotFound, ::testing::HasSubstr("--agent")));
  unsetenv("RUNFILES_DIR");
  EXPECT_THAT(FindAgent("/nonexistent/apply", ""),
              StatusIs(absl::StatusCode::kNotFound,
                       ::testing::HasSubstr("/nonexistent/apply.runfiles/")));
}

}  // namespace
}  // namespace fleetplan
