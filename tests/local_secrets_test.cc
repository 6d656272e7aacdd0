// [secrets] end to end on the local transport: a value from apply's
// environment reaches the rank, which prints it; the rank log, apply's and
// `logs`' output show *** instead; no file under the workdir but the 0600
// secrets file holds it, nor does the plan; a changed value relaunches; a
// missing one stops apply (exit 2) before any node is touched.

#include <sys/stat.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/apply_harness.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kValue[] = "tok-5d1e0c9a-value";
constexpr char kFileValue[] = "file-7f3b22-value";

class LocalSecretsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_THAT(WriteFileAtomic(dir_ + "/src/rank.sh",
                                "#!/bin/sh\n"
                                "[ -n \"$API_TOKEN\" ] || { echo 'no API_TOKEN'; exit 9; }\n"
                                "echo \"token=$API_TOKEN length=${#API_TOKEN}\"\n"
                                "printf 'file=%s\\n' \"$FILE_TOKEN\"\n",
                                0755),
                IsOk());
    ASSERT_THAT(WriteFileAtomic(dir_ + "/file-token", absl::StrCat(kFileValue, "\n"), 0600),
                IsOk());
    spec_ = dir_ + "/cluster.toml";
    ASSERT_THAT(
        WriteFileAtomic(spec_,
                        absl::StrCat("name = \"secrets\"\n[[nodes]]\nname = \"a\"\n"
                                     "address = \"127.0.0.1\"\ntransport = \"local\"\nworkdir = ",
                                     TomlString(dir_ + "/work"),
                                     "\n[sync]\nsource = \"src\"\n[secrets]\n"
                                     "API_TOKEN = { env = \"FP_E2E_TOKEN\" }\n"
                                     "FILE_TOKEN = { file = ",
                                     TomlString(dir_ + "/file-token"),
                                     " }\n[network]\nmaster_port = 29575\n"
                                     "[job]\nprogram = \"./rank.sh\"\n"),
                        0644),
        IsOk());
  }

  ToolResult Run(const std::vector<std::string>& argv, const std::string& token) {
    std::vector<std::pair<std::string, std::string>> env = {
        {"XDG_CONFIG_HOME", dir_ + "/config"}};
    if (!token.empty()) env.emplace_back("FP_E2E_TOKEN", token);
    return RunTool(argv, absl::Seconds(120), env);
  }

  std::string dir_;
  std::string spec_;
};

TEST_F(LocalSecretsTest, ValuesReachTheRankAndNothingElse) {
  // Missing: exit 2 naming it, and the node was not touched.
  ToolResult missing = Run({"tools/fleetplan-apply", spec_}, "");
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_THAT(missing.output, HasSubstr("secret API_TOKEN"));
  EXPECT_THAT(missing.output, HasSubstr("environment variable FP_E2E_TOKEN is not set"));
  struct stat st;
  EXPECT_NE(stat((dir_ + "/work").c_str(), &st), 0) << "the workdir was created";

  ToolResult apply = Run({"tools/fleetplan-apply", spec_}, kValue);
  ASSERT_EQ(apply.status, 0) << apply.output;
  // The rank had the value (its length) and printed it; apply shows ***.
  EXPECT_THAT(apply.output, HasSubstr(absl::StrCat("token=*** length=", strlen(kValue))));
  EXPECT_THAT(apply.output, HasSubstr("file=***"));
  EXPECT_THAT(apply.output, Not(HasSubstr(kValue)));
  EXPECT_THAT(apply.output, Not(HasSubstr(kFileValue)));

  ToolResult logs = Run({"tools/fleetplan-logs", spec_}, "");
  ASSERT_EQ(logs.status, 0) << logs.output;
  EXPECT_THAT(logs.output, HasSubstr("token=*** length="));
  EXPECT_THAT(logs.output, Not(HasSubstr(kValue)));

  // The values are in the 0600 secrets file only, in a 0700 state folder.
  std::string secrets = dir_ + "/work/.fleetplan/nodes/a/secrets.env";
  FP_ASSERT_OK_AND_ASSIGN(
      std::string holders,
      RunScript(absl::StrCat("grep -rlF -e '", kValue, "' -e '", kFileValue, "' '", dir_,
                             "/work' || true")));
  EXPECT_EQ(holders, secrets);
  ASSERT_EQ(stat(secrets.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat((dir_ + "/work/.fleetplan").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  FP_ASSERT_OK_AND_ASSIGN(
      std::string open_files,
      RunScript(absl::StrCat("find '", dir_, "/work/.fleetplan' -type f -perm /077 "
                             "! -path '*/bin/*'")));
  EXPECT_EQ(open_files, "") << "state files others can read";

  // Neither plan --json nor a saved plan holds a value.
  ToolResult json = Run({"tools/fleetplan-plan", "--json", spec_}, kValue);
  ASSERT_EQ(json.status, 0) << json.output;
  EXPECT_THAT(json.output, HasSubstr("API_TOKEN (env FP_E2E_TOKEN)"));
  EXPECT_THAT(json.output, Not(HasSubstr(kValue)));
  std::string saved = dir_ + "/saved-plan.json";
  ASSERT_EQ(Run({"tools/fleetplan-plan", "--out", saved, spec_}, kValue).status, 0);
  FP_ASSERT_OK_AND_ASSIGN(std::string saved_text, ReadFileToString(saved));
  EXPECT_THAT(saved_text, Not(HasSubstr(kValue)));

  // Unchanged: nothing runs; a new value: written again and relaunched.
  ToolResult same = Run({"tools/fleetplan-apply", "--json", spec_}, kValue);
  ASSERT_EQ(same.status, 0) << same.output;
  EXPECT_THAT(FinishedSteps(same.output).changed, ::testing::IsEmpty());
  ToolResult changed = Run({"tools/fleetplan-apply", "--json", spec_}, "another-value-42");
  ASSERT_EQ(changed.status, 0) << changed.output;
  EXPECT_THAT(absl::StrJoin(FinishedSteps(changed.output).changed, "\n"),
              HasSubstr("environment"));
  EXPECT_THAT(changed.output, Not(HasSubstr("another-value-42")));
  FP_ASSERT_OK_AND_ASSIGN(std::string file, ReadFileToString(secrets));
  EXPECT_THAT(file, HasSubstr("another-value-42"));
}

}  // namespace
}  // namespace fleetplan
