// What a plan holds of [secrets]: names and sources, never a value, in its
// text, its JSON and the env.sh it writes; env.sh sources the secrets file
// that apply writes, so the ranks get the values from there.

#include <stdlib.h>

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/plan/compile.h"
#include "tools/plan/node_scripts.h"
#include "tools/plan/plan_json.h"
#include "tools/plan/render.h"
#include "tools/plan/test_specs.h"
#include "tools/protocol/node_layout.h"
#include "tools/util/sh_test_util.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kValue[] = "s3cret-value-in-the-controller-environment";

ClusterSpec SpecWithSecrets() {
  ClusterSpec spec = TwoByTwoSpec();
  SecretSpec token;
  token.name = "HF_TOKEN";
  token.source = SecretSpec::Source::kFile;
  token.from = "~/.cache/huggingface/token";
  SecretSpec key;
  key.name = "WANDB_API_KEY";
  key.source = SecretSpec::Source::kEnv;
  key.from = "FP_TEST_WANDB";
  spec.secrets = {token, key};
  return spec;
}

const Step& EnvStep(const Plan& plan, size_t node) {
  return FindPhase(plan, PhaseKind::kEnvironment)->steps[node];
}

TEST(SecretsPlanTest, PlanTextAndJsonShowNamesAndSourcesButNoValue) {
  // The value is where apply would read it; compiling must not.
  setenv("FP_TEST_WANDB", kValue, 1);
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(SpecWithSecrets(), {"abc"}));
  std::string text = RenderPlanText(plan, /*color=*/false);
  std::string json = RenderPlanJson(plan);
  EXPECT_THAT(text, HasSubstr("write /home/ubuntu/project/.fleetplan/nodes/worker/env.sh and "
                              "the secrets file, secrets: HF_TOKEN (file "
                              "~/.cache/huggingface/token), WANDB_API_KEY (env FP_TEST_WANDB)"));
  EXPECT_THAT(json, HasSubstr("\"secrets\": \"HF_TOKEN (file ~/.cache/huggingface/token), "
                              "WANDB_API_KEY (env FP_TEST_WANDB)\""));
  EXPECT_THAT(text, Not(HasSubstr(kValue)));
  EXPECT_THAT(json, Not(HasSubstr(kValue)));
  for (const Phase& phase : plan.phases) {
    for (const Step& step : phase.steps) {
      EXPECT_THAT(step.command, Not(HasSubstr(kValue)));
      EXPECT_THAT(step.content, Not(HasSubstr(kValue)));
    }
  }
  unsetenv("FP_TEST_WANDB");
}

TEST(SecretsPlanTest, ASourceChangesTheEnvironmentStep) {
  ClusterSpec spec = SpecWithSecrets();
  FP_ASSERT_OK_AND_ASSIGN(Plan before, CompilePlan(spec, {}));
  spec.secrets[1].from = "OTHER_VARIABLE";
  FP_ASSERT_OK_AND_ASSIGN(Plan after, CompilePlan(spec, {}));
  EXPECT_NE(EnvStep(before, 0).hash, EnvStep(after, 0).hash);
  EXPECT_NE(before.spec_hash, after.spec_hash);
  // Without secrets, env.sh is as it always was.
  FP_ASSERT_OK_AND_ASSIGN(Plan none, CompilePlan(TwoByTwoSpec(), {}));
  EXPECT_THAT(EnvStep(none, 0).content, Not(HasSubstr("secrets")));
  EXPECT_TRUE(EnvStep(none, 0).inputs.empty());
}

TEST(SecretsPlanTest, EnvScriptSourcesTheSecretsFileWhenThere) {
  std::string dir = MakeTestDir();
  ClusterSpec spec = SpecWithSecrets();
  for (NodeSpec& node : spec.nodes) {
    node.workdir = dir + "/work";
    node.python = PythonEnv();
  }
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec, {}));
  const NodeSpec& node = spec.nodes[0];
  std::string env_sh = dir + "/env.sh";
  WriteFileOrDie(env_sh, EnvStep(plan, 0).content);
  std::string print = absl::StrCat(". '", env_sh, "' && printf '%s|%s|%s' \"$",
                                   kSecretNamesVar, "\" \"${HF_TOKEN-unset}\" \"$WANDB_API_KEY\"");
  // Before apply wrote the file (exec on a fresh node): nothing, no error.
  FP_ASSERT_OK_AND_ASSIGN(std::string before, RunSh(print));
  EXPECT_EQ(before, "HF_TOKEN,WANDB_API_KEY|unset|");
  ASSERT_THAT(RunSh(absl::StrCat("mkdir -p \"$(dirname '", SecretsPath(node), "')\"")), IsOk());
  WriteFileOrDie(SecretsPath(node), "export HF_TOKEN='hf'\nexport WANDB_API_KEY='w b'\n");
  FP_ASSERT_OK_AND_ASSIGN(std::string after, RunSh(print));
  EXPECT_EQ(after, "HF_TOKEN,WANDB_API_KEY|hf|w b");
}

TEST(SecretsPlanTest, SecretsFileGivesEveryValueByteForByte) {
  std::string dir_ = MakeTestDir();
  EnvList values = {{"A", "it's $(touch x) `id`"}, {"B", "two\nlines\n"}, {"C", ""}};
  std::string file = dir_ + "/secrets.env";
  WriteFileOrDie(file, SecretsFileText(values));
  FP_ASSERT_OK_AND_ASSIGN(std::string out,
                          RunSh(absl::StrCat("cd '", dir_, "' && . '", file,
                                             "' && printf '%s|%s|%s' \"$A\" \"$B\" \"$C\"")));
  EXPECT_EQ(out, "it's $(touch x) `id`|two\nlines\n|");
  EXPECT_FALSE(FileExists(dir_ + "/x"));
}

}  // namespace
}  // namespace fleetplan
