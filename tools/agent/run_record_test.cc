#include "tools/agent/run_record.h"

#include <limits.h>
#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

TEST(RunRecordTest, RunIdIsUtcTimeAndPid) {
  absl::Time t = absl::FromUnixSeconds(1735787045);  // 2025-01-02 03:04:05 UTC
  EXPECT_EQ(MakeRunId(t, 1234), "20250102T030405Z-1234");
}

TEST(RunRecordTest, CreateRunDirMovesTheLatestLink) {
  std::string dir = MakeTempDir();
  FP_ASSERT_OK_AND_ASSIGN(std::string first, CreateRunDir(dir + "/logs", "a-1"));
  EXPECT_EQ(first, dir + "/logs/a-1");
  FP_ASSERT_OK_AND_ASSIGN(std::string second, CreateRunDir(dir + "/logs", "b-2"));
  char target[PATH_MAX] = {};
  ASSERT_GT(readlink((dir + "/logs/latest").c_str(), target, sizeof(target) - 1), 0);
  EXPECT_STREQ(target, "b-2");
  EXPECT_EQ(access(first.c_str(), F_OK), 0);
  EXPECT_EQ(RankLogPath(second, 3), dir + "/logs/b-2/rank-3.log");
}

TEST(RunRecordTest, ResultRoundTripsThroughResultJson) {
  std::string dir = MakeTempDir();
  AgentResult result{"n\"1", 137, 2, 1, "20250102T030405Z-9"};
  ASSERT_THAT(WriteResult(dir, result), IsOk());
  FP_ASSERT_OK_AND_ASSIGN(std::string text, ReadFileToString(dir + "/result.json"));
  EXPECT_THAT(text, HasSubstr("\"failed_rank\": 2"));
  FP_ASSERT_OK_AND_ASSIGN(AgentResult back, ResultFromJson(text));
  EXPECT_EQ(back.node, "n\"1");
  EXPECT_EQ(back.status, 137);
  EXPECT_EQ(back.failed_rank, 2);
  EXPECT_EQ(back.restarts, 1);
  EXPECT_EQ(back.run_id, "20250102T030405Z-9");
}

TEST(RunRecordTest, MalformedResultIsInvalidArgument) {
  EXPECT_THAT(ResultFromJson("{"), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("not a JSON object")));
  EXPECT_THAT(ResultFromJson(R"({"node": "n", "status": "0"})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"status\"")));
}

}  // namespace
}  // namespace fleetplan
