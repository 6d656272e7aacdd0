#include "tools/cli/subcommands.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

struct Ran {
  int code;
  std::string out;
  std::string err;
};

// `fleetplan ARGS...` through the real dispatcher, its output captured.
Ran Fleetplan(std::vector<std::string> args) {
  args.insert(args.begin(), "fleetplan");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int code = FleetplanMain(static_cast<int>(argv.size()), argv.data());
  std::string out = ::testing::internal::GetCapturedStdout();
  return {code, out, ::testing::internal::GetCapturedStderr()};
}

TEST(SubcommandsTest, TheTableHoldsEveryCommand) {
  for (const char* name : {"plan", "apply", "status", "logs", "stop", "exec", "help", "version",
                           "completion"}) {
    const Subcommand* row = FindSubcommand(name);
    ASSERT_NE(row, nullptr) << name;
    EXPECT_NE(std::string(row->summary), "") << name;
  }
  EXPECT_EQ(FindSubcommand("aply"), nullptr);
}

TEST(SubcommandsTest, HelpListsTheCommandsAndExitCodes) {
  Ran help = Fleetplan({"help"});
  EXPECT_EQ(help.code, 0);
  for (const Subcommand& row : Subcommands()) {
    if (row.summary[0] == '\0') {
      EXPECT_THAT(help.out, Not(HasSubstr(row.name)));
    } else {
      EXPECT_THAT(help.out, HasSubstr(absl::StrCat("  ", row.name, " ")));
    }
  }
  for (const ExitCodeMeaning& entry : kExitCodeTable) {
    EXPECT_THAT(help.out, HasSubstr(entry.meaning));
  }
  EXPECT_EQ(Fleetplan({"--help"}).out, help.out);
  // With nothing to do, the overview and bad input.
  EXPECT_EQ(Fleetplan({}).code, kExitBadInput);
}

TEST(SubcommandsTest, EachCommandsHelpShowsItsFlagsAsTyped) {
  Ran help = Fleetplan({"apply", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.out, StartsWith("fleetplan apply - "));
  EXPECT_THAT(help.out, HasSubstr("--accept-new-host-keys"));
  EXPECT_THAT(help.out, HasSubstr("Examples:\n  fleetplan apply cluster.toml"));
  EXPECT_THAT(help.out, HasSubstr("75   detached"));
  EXPECT_THAT(help.out, Not(HasSubstr("accept_new_host_keys")));
  EXPECT_THAT(help.out, Not(HasSubstr("helpfull")));
  EXPECT_EQ(Fleetplan({"help", "apply"}).out, help.out);
  for (const char* name : {"plan", "status", "logs", "stop", "exec"}) {
    Ran command = Fleetplan({name, "-h"});
    EXPECT_EQ(command.code, 0) << name;
    EXPECT_THAT(command.out, StartsWith(absl::StrCat("fleetplan ", name, " - "))) << name;
    EXPECT_THAT(command.out, HasSubstr("Exit codes:\n  0    success")) << name;
  }
}

TEST(SubcommandsTest, AMistypedCommandIsToldTheNearestOne) {
  Ran typo = Fleetplan({"aply", "cluster.toml"});
  EXPECT_EQ(typo.code, kExitBadInput);
  EXPECT_THAT(typo.err, HasSubstr("'aply' is not a command; did you mean `apply`?"));
  Ran far = Fleetplan({"deploy"});
  EXPECT_EQ(far.code, kExitBadInput);
  EXPECT_THAT(far.err, Not(HasSubstr("did you mean")));
  EXPECT_THAT(Fleetplan({"help", "stauts"}).err, HasSubstr("did you mean `status`?"));
}

TEST(SubcommandsTest, AWrongCommandLineIsBadInput) {
  Ran unknown = Fleetplan({"plan", "--jsn", "a.toml"});
  EXPECT_EQ(unknown.code, kExitBadInput);
  EXPECT_THAT(unknown.err, HasSubstr("fleetplan plan: unknown flag --jsn; did you mean `--json`?"));
  Ran missing = Fleetplan({"status"});
  EXPECT_EQ(missing.code, kExitBadInput);
  EXPECT_THAT(missing.err, HasSubstr("expected one spec file"));
  EXPECT_EQ(Fleetplan({"exec", "a.toml"}).code, kExitBadInput);
}

TEST(SubcommandsTest, VersionManPagesAndCompletions) {
  Ran version = Fleetplan({"version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_THAT(version.out, StartsWith("fleetplan "));
  EXPECT_EQ(Fleetplan({"--version"}).out, version.out);

  Ran man = Fleetplan({"help", "--man", "logs"});
  EXPECT_THAT(man.out, StartsWith(".TH FLEETPLAN\\-LOGS 1"));
  EXPECT_THAT(man.out, HasSubstr("\\fB\\-\\-follow\\fR"));
  EXPECT_THAT(Fleetplan({"help", "--man"}).out, HasSubstr(".BR fleetplan\\-exec (1)"));

  Ran bash = Fleetplan({"completion", "bash"});
  EXPECT_EQ(bash.code, 0);
  EXPECT_THAT(bash.out, HasSubstr("complete -F _fleetplan fleetplan"));
  EXPECT_THAT(bash.out, HasSubstr("--accept-new-host-keys"));
  EXPECT_THAT(bash.out, HasSubstr("        --node) COMPREPLY=($(compgen -W \"$(_fleetplan_nodes"));
  Ran zsh = Fleetplan({"completion", "zsh"});
  EXPECT_THAT(zsh.out, StartsWith("#compdef fleetplan\n"));
  EXPECT_THAT(zsh.out, HasSubstr("'*--node=[Only this node]:NAME:_fleetplan_nodes'"));
  EXPECT_EQ(Fleetplan({"completion", "fish"}).code, kExitBadInput);
}

}  // namespace
}  // namespace fleetplan
