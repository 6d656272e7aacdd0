#include "tools/cli/secret_sources.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/util/sh_test_util.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

SecretSpec Secret(const std::string& name, SecretSpec::Source source, const std::string& from) {
  SecretSpec secret;
  secret.name = name;
  secret.source = source;
  secret.from = from;
  secret.location = {"/specs/cluster.toml", 7, 5};
  return secret;
}

class SecretSourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTestDir();
    setenv("HOME", dir_.c_str(), 1);
  }
  std::string dir_;
};

TEST_F(SecretSourcesTest, ReadsEnvFileAndCommand) {
  setenv("FP_TEST_SECRET", "from env\n", 1);
  WriteFileOrDie(dir_ + "/token", "from file\n");
  FP_ASSERT_OK_AND_ASSIGN(
      EnvList values,
      ResolveSecrets({Secret("A", SecretSpec::Source::kEnv, "FP_TEST_SECRET"),
                      Secret("B", SecretSpec::Source::kFile, "~/token"),
                      Secret("C", SecretSpec::Source::kCommand, "printf 'it'\\''s\\n'; echo noise >&2")}));
  // A variable is taken as set; a file's and a command's last newline go.
  EXPECT_EQ(values, (EnvList{{"A", "from env\n"}, {"B", "from file"}, {"C", "it's"}}));
}

TEST_F(SecretSourcesTest, AMissingSourceNamesTheSecretNotAValue) {
  unsetenv("FP_TEST_UNSET");
  setenv("FP_TEST_SECRET", "hunter2", 1);
  absl::StatusOr<EnvList> unset = ResolveSecrets(
      {Secret("A", SecretSpec::Source::kEnv, "FP_TEST_SECRET"),
       Secret("WANDB_API_KEY", SecretSpec::Source::kEnv, "FP_TEST_UNSET")});
  EXPECT_EQ(unset.status(), absl::FailedPreconditionError(
                                "secret WANDB_API_KEY (/specs/cluster.toml:7:5): environment "
                                "variable FP_TEST_UNSET is not set"));
  absl::StatusOr<EnvList> file =
      ResolveSecrets({Secret("HF_TOKEN", SecretSpec::Source::kFile, "~/missing")});
  EXPECT_TRUE(absl::IsFailedPrecondition(file.status()));
  EXPECT_THAT(file.status().message(),
              HasSubstr(absl::StrCat("secret HF_TOKEN (/specs/cluster.toml:7:5): cannot open \"",
                                     dir_, "/missing\"")));
  absl::StatusOr<EnvList> command = ResolveSecrets(
      {Secret("DB", SecretSpec::Source::kCommand, "echo hunter2; exit 3")});
  EXPECT_EQ(command.status(),
            absl::FailedPreconditionError("secret DB (/specs/cluster.toml:7:5): command `echo "
                                          "hunter2; exit 3` failed (exit status 3)"));
  EXPECT_THAT(unset.status().message(), Not(HasSubstr("hunter2")));
}

TEST_F(SecretSourcesTest, DigestKeyIsMadeOnceAndPrivate) {
  setenv("XDG_CONFIG_HOME", (dir_ + "/config").c_str(), 1);
  std::string path = DigestKeyPath();
  EXPECT_EQ(path, dir_ + "/config/fleetplan/secret-digest.key");
  FP_ASSERT_OK_AND_ASSIGN(JobKey made, LoadOrMakeDigestKey(path));
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  FP_ASSERT_OK_AND_ASSIGN(JobKey again, LoadOrMakeDigestKey(path));
  EXPECT_EQ(made.view(), again.view());
  unsetenv("XDG_CONFIG_HOME");
  EXPECT_EQ(DigestKeyPath(), dir_ + "/.config/fleetplan/secret-digest.key");
}

TEST_F(SecretSourcesTest, DigestTellsAChangeButNotTheValue) {
  FP_ASSERT_OK_AND_ASSIGN(JobKey key, MakeJobKey());
  FP_ASSERT_OK_AND_ASSIGN(JobKey other, MakeJobKey());
  FP_ASSERT_OK_AND_ASSIGN(std::string digest, SecretsDigest(key, {{"A", "v1"}}));
  EXPECT_EQ(digest.size(), 64u);
  EXPECT_THAT(SecretsDigest(key, {{"A", "v1"}}), IsOkAndHolds(digest));
  EXPECT_THAT(SecretsDigest(key, {{"A", "v2"}}), IsOkAndHolds(::testing::Ne(digest)));
  EXPECT_THAT(SecretsDigest(other, {{"A", "v1"}}), IsOkAndHolds(::testing::Ne(digest)));
  // Framed: moving bytes between name and value is a change.
  FP_ASSERT_OK_AND_ASSIGN(std::string moved, SecretsDigest(key, {{"AB", "c"}}));
  EXPECT_THAT(SecretsDigest(key, {{"A", "Bc"}}), IsOkAndHolds(::testing::Ne(moved)));
  EXPECT_THAT(SecretsDigest(key, {}), IsOkAndHolds(""));
}

}  // namespace
}  // namespace fleetplan
