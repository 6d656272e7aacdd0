// The shell text a plan writes and runs on nodes, checked by a real /bin/sh:
// env.sh and the launch command (the preflight script has
// preflight_script_test).

#include <sys/stat.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/ssh/ssh_groups.h"
#include "tools/plan/compile.h"
#include "tools/plan/node_scripts.h"
#include "tools/plan/test_specs.h"
#include "tools/protocol/node_layout.h"
#include "tools/util/sh_test_util.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Key;
using ::testing::Not;

class NodeScriptsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTestDir();
    spec_ = TwoByTwoSpec();
    for (NodeSpec& node : spec_.nodes) {
      node.workdir = dir_ + "/work dir";
      node.python.venv = dir_ + "/venv";
    }
    ASSERT_EQ(mkdir((dir_ + "/venv").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((dir_ + "/venv/bin").c_str(), 0755), 0);
    WriteFileOrDie(dir_ + "/venv/bin/activate",
                   "FP_VENV_ACTIVE=yes; export FP_VENV_ACTIVE\n");
  }

  const Step& StepOf(const Plan& plan, PhaseKind kind, const std::string& node) {
    for (const Phase& phase : plan.phases) {
      for (const Step& step : phase.steps) {
        if (phase.kind == kind && step.node == node) return step;
      }
    }
    static const Step kNone;
    ADD_FAILURE() << "no " << PhaseName(kind) << " step on " << node;
    return kNone;
  }

  // Writes the node's env.sh and returns the environment after sourcing it.
  std::map<std::string, std::string> SourceEnvScript(const Plan& plan,
                                                     const std::string& node) {
    std::string file = absl::StrCat(dir_, "/env-", node, ".sh");
    WriteFileOrDie(file, StepOf(plan, PhaseKind::kEnvironment, node).content);
    auto output = RunSh(absl::StrCat(
        "unset RANK LOCAL_RANK; LD_LIBRARY_PATH=/base; export LD_LIBRARY_PATH; "
        ". '", file, "' && env -0"));
    EXPECT_THAT(output, IsOk());
    return output.ok() ? ParseEnvZero(*output) : std::map<std::string, std::string>();
  }

  std::string dir_;
  ClusterSpec spec_;
};

TEST_F(NodeScriptsTest, EnvScriptExportsHostileValuesByteForByte) {
  const EnvList hostile = {
      {"FP_SUBST", absl::StrCat("$(touch ", dir_, "/substituted)")},
      {"FP_BACKQUOTE", absl::StrCat("`touch ", dir_, "/backquoted`")},
      {"FP_RM", "$(rm -rf ~)"},
      {"FP_SQUOTE", "it's"},
      {"FP_DQUOTE", "say \"hi\""},
      {"FP_BACKSLASH", "a\\b\\"},
      {"FP_NEWLINE", "line1\nline2\n"},
      {"FP_HOME", "$HOME"},
      {"FP_SEMI", "x; touch /tmp/never"},
      {"FP_EMPTY", ""},
      {"FP_UTF8", "naïve ✓ 日本"},
  };
  spec_.env = hostile;
  EditSshGroups(spec_).groups[0].env = {
      {"LD_LIBRARY_PATH", "$LD_LIBRARY_PATH:/usr/local/cuda/lib64"},
      {"FP_GROUP_SUBST", absl::StrCat("${LD_LIBRARY_PATH}$(touch ", dir_, "/group)`id`'\\")},
  };
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec_, {}));

  std::map<std::string, std::string> head = SourceEnvScript(plan, "head");
  for (const auto& [name, value] : hostile) EXPECT_EQ(head[name], value) << name;
  EXPECT_EQ(head["LD_LIBRARY_PATH"], "/base:/usr/local/cuda/lib64");
  EXPECT_EQ(head["FP_GROUP_SUBST"],
            absl::StrCat("/base$(touch ", dir_, "/group)`id`'\\"));
  EXPECT_EQ(head["FP_VENV_ACTIVE"], "yes");
  EXPECT_EQ(head["MASTER_ADDR"], "10.0.0.5");
  EXPECT_EQ(head["WORLD_SIZE"], "4");
  EXPECT_EQ(head["CUDA_VISIBLE_DEVICES"], "0,1");
  EXPECT_THAT(head, Not(testing::Contains(Key("RANK"))));
  EXPECT_THAT(head, Not(testing::Contains(Key("LOCAL_RANK"))));

  // The other group's node gets the global values but not group "lambda"'s.
  std::map<std::string, std::string> worker = SourceEnvScript(plan, "worker");
  EXPECT_EQ(worker["FP_SUBST"], hostile[0].second);
  EXPECT_EQ(worker["LD_LIBRARY_PATH"], "/base");
  EXPECT_THAT(worker, Not(testing::Contains(Key("FP_GROUP_SUBST"))));

  EXPECT_FALSE(FileExists(dir_ + "/substituted"));
  EXPECT_FALSE(FileExists(dir_ + "/backquoted"));
  EXPECT_FALSE(FileExists(dir_ + "/group"));
  EXPECT_FALSE(FileExists("/tmp/never"));
}

TEST_F(NodeScriptsTest, EnvScriptActivatesConda) {
  std::string conda_sh = dir_ + "/conda.sh";
  WriteFileOrDie(conda_sh,
                 "conda() { FP_CONDA_ARGS=\"$*\"; export FP_CONDA_ARGS; }\n");
  spec_.nodes[1].python.kind = PythonEnv::Kind::kConda;
  spec_.nodes[1].python.conda = "torch env";
  spec_.nodes[1].python.conda_sh = conda_sh;
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec_, {}));
  std::map<std::string, std::string> head = SourceEnvScript(plan, "head");
  EXPECT_EQ(head["FP_CONDA_ARGS"], "activate torch env");
  EXPECT_THAT(head, Not(testing::Contains(Key("FP_VENV_ACTIVE"))));
}

TEST_F(NodeScriptsTest, LaunchPassesArgumentsVerbatimToTheAgent) {
  spec_.job.args = {"--x=$(touch " + dir_ + "/launched)", "two words", "'", "", "`id`"};
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec_, {}));
  const NodeSpec& head = spec_.nodes[1];
  // A stand-in agent that prints its cwd, one env value and its arguments.
  std::string bin = UnderWorkdir(head, ".fleetplan/bin");
  ASSERT_THAT(RunSh(absl::StrCat("mkdir -p '", bin, "' '", head.workdir,
                                 "/.fleetplan/nodes/head'")),
              IsOk());
  std::string agent = bin + "/fleetplan-agent";
  WriteFileOrDie(agent,
                 "#!/bin/sh\nprintf '%s\\0' \"$PWD\" \"$MASTER_ADDR\" \"$@\"\n");
  ASSERT_EQ(chmod(agent.c_str(), 0755), 0);
  WriteFileOrDie(EnvScriptPath(head),
                 StepOf(plan, PhaseKind::kEnvironment, "head").content);

  auto output = RunSh(StepOf(plan, PhaseKind::kLaunch, "head").command);
  ASSERT_THAT(output, IsOk());
  std::vector<std::string> argv = absl::StrSplit(*output, '\0');
  argv.pop_back();  // after the last NUL
  std::vector<std::string> expected = {
      head.workdir,
      "10.0.0.5",
      "launch",
      "--protocol=2",
      "--node=head",
      "--first-rank=2",
      "--nproc=2",
      absl::StrCat("--log-dir=", head.workdir, "/.fleetplan/nodes/head/logs"),
      absl::StrCat("--key-file=", head.workdir, "/.fleetplan/nodes/head/job.key"),
      absl::StrCat("--private-dir=", head.workdir, "/.fleetplan"),
      "--detach",
      "--nodes=worker,head",
      "--supervisor-port=29501",
      "--",
      absl::StrCat(head.workdir, "/.fleetplan/bin/train")};
  expected.insert(expected.end(), spec_.job.args.begin(), spec_.job.args.end());
  EXPECT_EQ(argv, expected);
  EXPECT_FALSE(FileExists(dir_ + "/launched"));
}

}  // namespace
}  // namespace fleetplan

namespace fleetplan {
namespace {

TEST(ShellCommandLineTest, OneArgumentIsACommandLineSeveralAreWords) {
  EXPECT_EQ(ShellCommandLine({"nvidia-smi | head -5"}), "nvidia-smi | head -5");
  EXPECT_EQ(ShellCommandLine({"ls", "my file", "$HOME"}), "ls 'my file' '$HOME'");
}

TEST_F(NodeScriptsTest, ExecRunsInTheEnvironmentAndWorkdirApplyLeft) {
  const NodeSpec& node = spec_.nodes[0];
  std::vector<std::string> from_spec = EnvScripts(spec_);
  ASSERT_EQ(from_spec.size(), spec_.nodes.size());
  std::string command =
      ExecCommand(node, from_spec[0], "echo \"$FP_VENV_ACTIVE $NCCL_DEBUG $GROUP_RANK $FROM\"; pwd");
  // Before any apply: the environment made from the spec, in the home folder.
  FP_ASSERT_OK_AND_ASSIGN(std::string before,
                          RunSh(absl::StrCat("HOME='", dir_, "'; {\n", command, "} 2>&1")));
  EXPECT_THAT(before, HasSubstr("yes INFO 0 \n"));
  EXPECT_THAT(before, HasSubstr("does not exist on this node yet (apply has not run here)"));
  EXPECT_THAT(before, HasSubstr(absl::StrCat(dir_, "\n")));
  // After: env.sh as the environment phase wrote it, in the workdir.
  std::string env_sh = EnvScriptPath(node);
  ASSERT_THAT(RunSh(absl::StrCat("mkdir -p \"$(dirname '", env_sh, "')\"")), IsOk());
  WriteFileOrDie(env_sh, "FROM=env.sh; export FROM\n");
  FP_ASSERT_OK_AND_ASSIGN(std::string after, RunSh(command));
  EXPECT_EQ(after, absl::StrCat("   env.sh\n", node.workdir, "\n"));
}

}  // namespace
}  // namespace fleetplan
