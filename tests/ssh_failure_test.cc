// Why a job failed, end to end over ssh (tests/ssh_testbed_test.h): the
// exception a rank's script recorded with torch's @record, or the last
// lines of a rank without it, in apply's summary and in `status`; and
// torchrun's whole contract as the ranks see it.

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/apply_harness.h"
#include "tests/ssh_testbed_test.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class SshFailureTest : public SshApplyTest {
 protected:
  void CopyScript(const std::string& script) {
    ASSERT_THAT(CopyFileAtomic(Runfile(absl::StrCat("tests/testdata/", script)),
                               absl::StrCat(dir_, "/src/", script), 0644),
                IsOk());
  }

  // `status --json`'s "failure" once the job ended.
  static nlohmann::json Failure(const std::string& spec) {
    nlohmann::json status = Status(spec);
    EXPECT_EQ(status["state"], "failed") << status.dump();
    return status.value("failure", nlohmann::json());
  }
};

TEST_F(SshFailureTest, ARecordedExceptionIsTheFailure) {
  CopyScript("raise_recorded.py");
  const std::string secret = "ssh-secret-2718-do-not-print";
  SpecOptions options;
  options.program = "/usr/bin/python3";
  options.args = "\"raise_recorded.py\"";
  options.fail_rank = "1";
  options.job = "[secrets]\nAPI_TOKEN = { env = \"FP_SSH_FAILURE_SECRET\" }\n";
  std::string spec = WriteSpec(options);
  ToolResult apply = RunTool({"tools/fleetplan-apply", spec}, absl::Minutes(3),
                             {{"FP_SSH_FAILURE_SECRET", secret}});
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output,
              HasSubstr(absl::StrCat("rank 1 on node '", Node(1).name,
                                     "' failed with exit status 1: ValueError: bad shard 7 "
                                     "with token *** (at ",
                                     kWorkdir, "/raise_recorded.py:11 in load)")));
  EXPECT_THAT(apply.output, Not(HasSubstr(secret)));

  nlohmann::json failure = Failure(spec);
  EXPECT_EQ(failure["node"], Node(1).name) << failure.dump();
  EXPECT_EQ(failure["rank"], 1);
  EXPECT_EQ(failure["exit_status"], 1);
  EXPECT_EQ(failure["type"], "ValueError");
  EXPECT_EQ(failure["message"], "bad shard 7 with token ***");
  EXPECT_EQ(failure["file"], absl::StrCat(kWorkdir, "/raise_recorded.py"));
  EXPECT_EQ(failure["line"], 11);
  EXPECT_EQ(failure["function"], "load");
  ToolResult status = Job("status", {spec});
  EXPECT_THAT(status.output, HasSubstr("ValueError: bad shard 7 with token ***"));
  // The error file is the job's user's alone.
  EXPECT_THAT(Exec(1, absl::StrCat("stat -c %a ", kWorkdir, "/.fleetplan/nodes/", Node(1).name,
                                   "/logs/latest/rank-1.error-0.json")),
              IsOkAndHolds("600"));
  ExpectNothingRunning();
}

TEST_F(SshFailureTest, WithoutRecordTheRanksLastLinesAreTheFailure) {
  CopyScript("fail_plain.py");
  SpecOptions options;
  options.program = "/usr/bin/python3";
  options.args = "\"fail_plain.py\"";
  options.fail_rank = "2";
  std::string spec = WriteSpec(options);
  ToolResult apply = Apply({spec}, absl::Minutes(3));
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr("last lines of rank 2:\n  "));
  EXPECT_THAT(apply.output, HasSubstr("\n  ZeroDivisionError: division by zero"));

  nlohmann::json failure = Failure(spec);
  EXPECT_EQ(failure["node"], Node(2).name) << failure.dump();
  EXPECT_EQ(failure["rank"], 2);
  EXPECT_EQ(failure["type"], "");
  std::string tail = failure.value("log_tail", "");
  EXPECT_THAT(tail, HasSubstr("step 19\n"));
  EXPECT_THAT(tail, Not(HasSubstr("step 5\n")));  // ten lines, no more
  EXPECT_THAT(tail, ::testing::EndsWith("ZeroDivisionError: division by zero"));
  ExpectNothingRunning();
}

// Every variable of torchrun's contract, with torchrun's values, as the
// ranks see them and as `plan --json` said they would.
TEST_F(SshFailureTest, RanksSeeTorchrunsWholeContract) {
  std::string spec = WriteSpec({});
  ToolResult plan = RunTool({"tools/fleetplan-plan", "--json", spec});
  ASSERT_EQ(plan.status, 0) << plan.output;
  nlohmann::json planned = nlohmann::json::parse(plan.output)["ranks"];
  ToolResult apply = Apply({spec});
  ASSERT_EQ(apply.status, 0) << apply.output;
  for (int rank = 0; rank < kNodes; ++rank) {
    FP_ASSERT_OK_AND_ASSIGN(std::string text, Exec(rank, absl::StrCat("cat /tmp/rank-", rank,
                                                                        ".env")));
    std::map<std::string, std::string> seen;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      std::vector<std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
      if (kv.size() == 2) seen[kv[0]] = kv[1];
    }
    std::string run_id = seen["TORCHELASTIC_RUN_ID"];
    EXPECT_THAT(run_id, ::testing::MatchesRegex("[0-9]{8}T[0-9]{6}Z-[0-9]+"));
    for (const auto& [name, value] : planned[rank]["env"].items()) {
      EXPECT_EQ(seen[name], absl::StrReplaceAll(value.get<std::string>(), {{"<run-id>", run_id}}))
          << "rank " << rank << " " << name;
    }
    std::map<std::string, std::string> torchrun = {
        {"RANK", absl::StrCat(rank)},
        {"LOCAL_RANK", "0"},
        {"GROUP_RANK", absl::StrCat(rank)},
        {"ROLE_RANK", absl::StrCat(rank)},
        {"ROLE_NAME", "default"},
        {"LOCAL_WORLD_SIZE", "1"},
        {"WORLD_SIZE", "3"},
        {"GROUP_WORLD_SIZE", "3"},
        {"ROLE_WORLD_SIZE", "3"},
        {"MASTER_ADDR", Node(0).ip},
        {"TORCHELASTIC_RESTART_COUNT", "0"},
        {"TORCHELASTIC_MAX_RESTARTS", "0"},
        {"TORCHELASTIC_USE_AGENT_STORE", "False"},
        {"NCCL_ASYNC_ERROR_HANDLING", "1"},
        {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"},
        {"TORCHELASTIC_ERROR_FILE",
         absl::StrCat(kWorkdir, "/.fleetplan/nodes/", Node(rank).name, "/logs/", run_id,
                      "/rank-", rank, ".error-0.json")}};
    for (const auto& [name, value] : torchrun) {
      EXPECT_EQ(seen[name], value) << "rank " << rank << " " << name;
    }
    EXPECT_FALSE(seen["MASTER_PORT"].empty());
  }
}

}  // namespace
}  // namespace fleetplan
