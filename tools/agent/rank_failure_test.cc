#include "tools/agent/rank_failure.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

class RankFailureTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) {
    return std::string(::testing::TempDir()) + "/" + name;
  }
  void Write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::trunc) << text;
  }
};

TEST_F(RankFailureTest, TheErrorFileIsPrivateAndEmptiedBeforeTheRankStarts) {
  std::string path = Path("error-0.json");
  Write(path, R"({"message": "Stale: from before"})");
  chmod(path.c_str(), 0644);
  ASSERT_THAT(PrepareErrorFile(path), IsOk());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  EXPECT_EQ(st.st_size, 0);
  // As Python's open(path, "w") writes it: the mode stays.
  Write(path, R"({"message": {"message": "ValueError: token hunter2 is bad"}})");
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  RankError error = ExplainRankFailure(path, Path("none.log"), {"hunter2"});
  EXPECT_EQ(error.type, "ValueError");
  EXPECT_EQ(error.message, "token *** is bad");
}

TEST_F(RankFailureTest, WithoutAnErrorFileTheLogsLastLines) {
  std::string log = Path("rank-1.log");
  std::string text;
  for (int i = 0; i < 200000; ++i) text += "noise\n";
  Write(log, text + "Traceback (most recent call last):\nKeyError: 'a secret: s3cr3t'\n");
  for (const std::string& error_file : {Path("missing.json"), Path("empty.json"),
                                        Path("bad.json")}) {
    if (error_file != Path("missing.json")) {
      Write(error_file, error_file == Path("bad.json") ? "{\"message\": {\"mess" : "");
    }
    RankError error = ExplainRankFailure(error_file, log, {"s3cr3t"});
    EXPECT_EQ(error.type, "") << error_file;
    EXPECT_THAT(error.log_tail, ::testing::EndsWith("KeyError: 'a secret: ***'")) << error_file;
    EXPECT_LE(error.log_tail.size(), kMaxLogTailBytes);
  }
  EXPECT_EQ(ExplainRankFailure(Path("missing.json"), Path("missing.log"), {}).log_tail, "");
}

TEST_F(RankFailureTest, AHugeErrorFileIsNotRead) {
  std::string path = Path("huge.json");
  Write(path, "{\"message\": \"" + std::string(1 << 20, 'x') + "\"}");
  std::string log = Path("short.log");
  Write(log, "the end\n");
  EXPECT_EQ(ExplainRankFailure(path, log, {}).log_tail, "the end");
}

TEST_F(RankFailureTest, ShortSecretsStillLeaveFieldsInBounds) {
  std::string path = Path("short-secret.json");
  Write(path, "{\"message\": \"E: " + std::string(5000, 'a') + "\"}");
  RankError error = ExplainRankFailure(path, Path("none.log"), {"a"});
  EXPECT_EQ(error.message.size(), kMaxErrorMessageBytes);
}

}  // namespace
}  // namespace fleetplan
