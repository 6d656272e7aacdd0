#include "plugins/ssh/remote_command.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

TEST(RemoteCommandTest, ChangesDirectoryExportsAndRunsUnderSh) {
  CommandSpec command;
  command.command = "echo $GREETING";
  command.cwd = "/w/my dir";
  command.env = {{"GREETING", "it's here"}};
  absl::StatusOr<std::string> line = RemoteCommandLine(command, /*report_pid=*/false);
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(*line,
            "cd '/w/my dir' && export GREETING='it'\\''s here' && "
            "exec /bin/sh -c 'echo $GREETING'");
}

TEST(RemoteCommandTest, ReportsThePidFirstWhenAsked) {
  CommandSpec command;
  command.command = "true";
  absl::StatusOr<std::string> line = RemoteCommandLine(command, /*report_pid=*/true);
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_THAT(*line, HasSubstr(std::string(kPidMarker)));
  EXPECT_THAT(*line, HasSubstr("exec /bin/sh -c true"));
}

TEST(RemoteCommandTest, AnEnvNameThatIsNoShellIdentifierIsRefused) {
  CommandSpec command;
  command.command = "true";
  command.env = {{"BAD-NAME", "x"}};
  absl::StatusOr<std::string> line = RemoteCommandLine(command, false);
  EXPECT_EQ(line.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(line.status().message()), HasSubstr("BAD-NAME"));
}

}  // namespace
}  // namespace fleetplan
