#include "plugins/slurm/state_step.h"

#include <algorithm>
#include <map>
#include <optional>
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
  // Asked for its folder unchanged, the chief says "@same"; after a
  // command changed it, it prints it again.
  std::string requests = absl::StrCat(
      "@snapshot\n", absl::Base64Escape("echo hi; exit 4"), "\n",
      absl::Base64Escape(absl::StrCat("printf '{\"a\":2}' >", folder, "/records/sync.json")),
      "\n@snapshot\n");
  ASSERT_THAT(WriteFileAtomic(absl::StrCat(dir, "/requests"), requests, 0600), IsOk());
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", absl::StrCat("exec /bin/sh -c \"$0\" <", dir, "/requests"),
                  script};
  options.env = {{"SLURMD_NODENAME", "n0"}};
  FP_ASSERT_OK_AND_ASSIGN(Completed done, RunToCompletion(options, absl::Seconds(20)));
  ASSERT_EQ(done.status, 0) << done.output;
  std::vector<std::string> lines = absl::StrSplit(done.output, '\n');
  ASSERT_GE(lines.size(), 6u) << done.output;
  // Its folder first (the base64, then its end), then that it is there.
  EXPECT_EQ(lines[0], "@host n0");
  auto folder_from = [&](size_t first) {
    std::string output;
    for (size_t i = first; i < lines.size(); ++i) {
      absl::StrAppend(&output, "0: ", lines[i], "\n");
      if (lines[i] == "@end") break;
    }
    std::map<std::string, StateSnapshot> parsed = ParseEveryHostSnapshot({{"n0", folder}}, output);
    bool answered = false;
    return parsed.count("n0") == 0
               ? std::optional<std::string>()
               : parsed["n0"].Take(absl::StrCat(folder, "/records/sync.json"), &answered);
  };
  EXPECT_EQ(folder_from(0), "{\"a\":1}") << done.output;
  size_t chief = std::find(lines.begin(), lines.end(), "@chief") - lines.begin();
  ASSERT_LT(chief + 1, lines.size()) << done.output;
  EXPECT_EQ(lines[chief + 1], "@same") << done.output;
  size_t again = std::find(lines.begin() + chief, lines.end(), "@host n0") - lines.begin();
  ASSERT_LT(again, lines.size()) << done.output;
  EXPECT_EQ(folder_from(again), "{\"a\":2}") << done.output;
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
