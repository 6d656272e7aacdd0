#include "plugins/slurm/state_step.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "plugins/slurm/state_snapshot.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/process/subprocess.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

TEST(ParseRunAnswerTest, OutputAndStatus) {
  FP_ASSERT_OK_AND_ASSIGN(auto answer, ParseRunAnswer(absl::Base64Escape("held by x\n@s3\n")));
  EXPECT_EQ(answer.first, 3);
  EXPECT_EQ(answer.second, "held by x\n");
  // Output without a newline, and output that itself says "@s".
  FP_ASSERT_OK_AND_ASSIGN(answer, ParseRunAnswer(absl::Base64Escape("a@s1b@s0\n")));
  EXPECT_EQ(answer.first, 0);
  EXPECT_EQ(answer.second, "a@s1b");
}

TEST(ParseRunAnswerTest, GarbledAnswersAreErrors) {
  EXPECT_FALSE(ParseRunAnswer("not base64!").ok());
  EXPECT_FALSE(ParseRunAnswer(absl::Base64Escape("no status\n")).ok());
  EXPECT_FALSE(ParseRunAnswer(absl::Base64Escape("@sx\n")).ok());
}

// The chief's part of the step run by sh here, as one task of srun would
// run it: the other host's part is not taken, requests come on stdin.
TEST(StateStepCommandTest, ChiefServesSnapshotsAndCommands) {
  std::string dir = MakeTempDir();
  std::string folder = absl::StrCat(dir, "/w/.fleetplan/nodes/n0");
  ASSERT_THAT(MakeDirs(absl::StrCat(folder, "/records")), IsOk());
  ASSERT_THAT(WriteFileAtomic(absl::StrCat(folder, "/records/sync.json"), "{\"a\":1}", 0600), IsOk());
  std::string script = StateStepCommand(
      {{"n0", folder}, {"n1", absl::StrCat(dir, "/w/.fleetplan/nodes/n1")}}, "n0");
  std::string requests = absl::StrCat("@snapshot\n", absl::Base64Escape("echo hi; exit 4"), "\n");
  ASSERT_THAT(WriteFileAtomic(absl::StrCat(dir, "/requests"), requests, 0600), IsOk());
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", absl::StrCat("exec /bin/sh -c \"$0\" <", dir, "/requests"),
                  script};
  options.env = {{"SLURMD_NODENAME", "n0"}};
  FP_ASSERT_OK_AND_ASSIGN(Completed done, RunToCompletion(options, absl::Seconds(20)));
  ASSERT_EQ(done.status, 0) << done.output;
  std::vector<std::string> lines = absl::StrSplit(done.output, '\n');
  ASSERT_GE(lines.size(), 6u) << done.output;
  EXPECT_EQ(lines[0], "@chief");
  EXPECT_EQ(lines[1], "@host n0");
  // The snapshot's base64, then its end; the command's answer after it.
  std::string snapshot_output;
  for (size_t i = 1; i < lines.size(); ++i) {
    absl::StrAppend(&snapshot_output, "0: ", lines[i], "\n");
    if (lines[i] == "@end") break;
  }
  std::map<std::string, StateSnapshot> parsed =
      ParseEveryHostSnapshot({{"n0", folder}}, snapshot_output);
  ASSERT_EQ(parsed.count("n0"), 1u) << done.output;
  bool answered = false;
  EXPECT_EQ(parsed["n0"].Take(absl::StrCat(folder, "/records/sync.json"), &answered),
            "{\"a\":1}");
  size_t run = done.output.find("@run\n");
  size_t end = done.output.find("@done\n");
  ASSERT_NE(run, std::string::npos) << done.output;
  ASSERT_NE(end, std::string::npos) << done.output;
  std::string base64 = done.output.substr(run + 5, end - run - 5);
  base64.erase(std::remove(base64.begin(), base64.end(), '\n'), base64.end());
  FP_ASSERT_OK_AND_ASSIGN(auto answer, ParseRunAnswer(base64));
  EXPECT_EQ(answer.first, 4);
  EXPECT_EQ(answer.second, "hi\n");
}

}  // namespace
}  // namespace fleetplan
