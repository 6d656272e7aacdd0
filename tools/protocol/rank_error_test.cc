#include "tools/protocol/rank_error.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

// What python3-torch 1.13's @record wrote for `raise ValueError("bad shard 7")`.
constexpr absl::string_view kRecorded =
    R"({"message": {"message": "ValueError: bad shard 7", "extraInfo": {"py_callstack": )"
    R"("Traceback (most recent call last):\n  File \"/usr/lib/python3/dist-packages/torch/)"
    R"(distributed/elastic/multiprocessing/errors/__init__.py\", line 346, in wrapper\n    )"
    R"(return f(*args, **kwargs)\n           ^^^^^^^^^^^^^^^^^^\n  File \"/w/train.py\", )"
    R"(line 6, in main\n    load(7)\n  File \"/w/train.py\", line 3, in load\n    raise )"
    R"(ValueError(f\"bad shard {n}\")\nValueError: bad shard 7\n", "timestamp": "1795644275"}}})";

TEST(RankErrorTest, ReadsTheExceptionAndItsInnermostFrame) {
  FP_ASSERT_OK_AND_ASSIGN(RankError error, ParseErrorFile(kRecorded));
  EXPECT_EQ(error.type, "ValueError");
  EXPECT_EQ(error.message, "bad shard 7");
  EXPECT_EQ(error.file, "/w/train.py");
  EXPECT_EQ(error.line, 3);
  EXPECT_EQ(error.function, "load");
  EXPECT_EQ(error.log_tail, "");
  EXPECT_EQ(DescribeRankError(error), "ValueError: bad shard 7 (at /w/train.py:3 in load)");
}

TEST(RankErrorTest, TheNewerFormatAndAMessageWithoutAType) {
  FP_ASSERT_OK_AND_ASSIGN(RankError error,
                          ParseErrorFile(R"({"message": "RuntimeError: NCCL timeout"})"));
  EXPECT_EQ(DescribeRankError(error), "RuntimeError: NCCL timeout");
  FP_ASSERT_OK_AND_ASSIGN(error, ParseErrorFile(R"({"message": {"message": "it broke"}})"));
  EXPECT_EQ(error.type, "");
  EXPECT_EQ(DescribeRankError(error), "it broke");
  FP_ASSERT_OK_AND_ASSIGN(error, ParseErrorFile(R"({"message": {"message": "SystemExit: "}})"));
  EXPECT_EQ(DescribeRankError(error), "SystemExit");
}

TEST(RankErrorTest, RefusesWhatIsNoErrorFile) {
  EXPECT_THAT(ParseErrorFile(""), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseErrorFile(kRecorded.substr(0, kRecorded.size() / 2)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a JSON object")));
  EXPECT_THAT(ParseErrorFile("Traceback (most recent call last):"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseErrorFile(R"({"message": 7})"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseErrorFile(R"([1, 2])"), StatusIs(absl::StatusCode::kInvalidArgument));
  std::string huge = absl::StrCat(R"({"message": ")", std::string(kMaxErrorFileBytes, 'x'),
                                  R"("})");
  EXPECT_THAT(ParseErrorFile(huge),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("larger than")));
  std::string deep(kMaxErrorFileBytes, '[');
  EXPECT_THAT(ParseErrorFile(deep), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(RankErrorTest, BoundsEveryFieldAndKeepsItValidUtf8) {
  std::string long_message = absl::StrCat("OSError: ", std::string(40000, 'y'), "\xff");
  nlohmann::json file = {{"message", {{"message", long_message}}}};
  FP_ASSERT_OK_AND_ASSIGN(RankError error, ParseErrorFile(file.dump(-1, ' ', false,
                                                          nlohmann::json::error_handler_t::replace)));
  EXPECT_EQ(error.type, "OSError");
  EXPECT_EQ(error.message.size(), kMaxErrorMessageBytes);
  // A multi-byte character cut in two becomes '?'.
  EXPECT_EQ(BoundedUtf8("ab\xc3\xa9", 3), "ab?");
  EXPECT_EQ(BoundedUtf8("x\xff\xfey", 10), "x??y");
  EXPECT_EQ(BoundedUtf8("naïve ✓", 100), "naïve ✓");
  EXPECT_EQ(BoundedUtf8("0123456789", 4, /*keep_end=*/true), "6789");
  EXPECT_NO_THROW(RankErrorToJson(error).dump());
}

TEST(RankErrorTest, LogTailIsTheLastTenLines) {
  std::string output;
  for (int i = 1; i <= 30; ++i) absl::StrAppend(&output, "line ", i, "\n");
  RankError error = FromLogTail(output);
  EXPECT_EQ(error.log_tail.substr(0, 8), "line 21\n");
  EXPECT_EQ(error.log_tail.substr(error.log_tail.size() - 7), "line 30");
  EXPECT_EQ(DescribeRankError(error), "");
  EXPECT_EQ(FromLogTail("only\n").log_tail, "only");
  EXPECT_EQ(FromLogTail("").log_tail, "");
  std::string long_line(100000, 'z');
  EXPECT_EQ(FromLogTail(long_line).log_tail.size(), kMaxLogTailBytes);
}

TEST(RankErrorTest, JsonRoundTripAndBounds) {
  RankError error{"ValueError", "bad shard 7", "/w/train.py", 3, "load", ""};
  FP_ASSERT_OK_AND_ASSIGN(RankError back, RankErrorFromJson(RankErrorToJson(error), "doc"));
  EXPECT_EQ(back, error);
  nlohmann::json json = RankErrorToJson(error);
  json["message"] = std::string(kMaxErrorMessageBytes + 1, 'm');
  EXPECT_THAT(RankErrorFromJson(json, "doc"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"message\" is longer")));
  json = RankErrorToJson(error);
  json["line"] = -1;
  EXPECT_THAT(RankErrorFromJson(json, "doc"), StatusIs(absl::StatusCode::kInvalidArgument));
  json.erase("log_tail");
  EXPECT_THAT(RankErrorFromJson(json, "doc"), StatusIs(absl::StatusCode::kInvalidArgument));
}

// How the rank ended travels with its words; what agents before it wrote
// (no such fields) reads as a rank that exited by itself.
TEST(RankErrorTest, ItsDeathRoundTripsAndIsAbsentFromOlderAgents) {
  RankError error = FromLogTail("allocating\n");
  error.death = {9, false, true, 66u << 20, 64u << 20};
  FP_ASSERT_OK_AND_ASSIGN(RankError back, RankErrorFromJson(RankErrorToJson(error), "doc"));
  EXPECT_EQ(back, error);
  EXPECT_EQ(DescribeRankDeath(back.death),
            "killed by SIGKILL (signal 9); the kernel's OOM killer ended it: peak RSS 66.0 MiB "
            "of a 64.0 MiB limit");
  nlohmann::json older = RankErrorToJson(error);
  for (const char* field :
       {"signal", "core_dumped", "oom_killed", "peak_rss_bytes", "memory_limit_bytes"}) {
    older.erase(field);
  }
  FP_ASSERT_OK_AND_ASSIGN(RankError old, RankErrorFromJson(older, "doc"));
  EXPECT_EQ(old.death, RankDeath());
  nlohmann::json bad = RankErrorToJson(error);
  bad["signal"] = 99;
  EXPECT_THAT(RankErrorFromJson(bad, "doc"), StatusIs(absl::StatusCode::kInvalidArgument));
  RankDeath dumped{6, true};
  EXPECT_EQ(DescribeRankDeath(dumped), "killed by SIGABRT (signal 6), core dumped");
}

}  // namespace
}  // namespace fleetplan
