#include "tools/protocol/state_lock_record.h"

#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

TEST(StateLockRecordTest, RoundTrips) {
  StateLockHolder holder{"trainhost", "alice", 4242, absl::FromUnixSeconds(1764107675),
                         "20261125-215435-4242"};
  std::string text = SerializeStateLock(holder);
  EXPECT_EQ(text.find('\n'), std::string::npos);
  FP_ASSERT_OK_AND_ASSIGN(StateLockHolder back, ParseStateLock(text));
  EXPECT_EQ(back.host, "trainhost");
  EXPECT_EQ(back.user, "alice");
  EXPECT_EQ(back.pid, 4242);
  EXPECT_EQ(back.since, holder.since);
  EXPECT_EQ(back.run_id, holder.run_id);
  EXPECT_EQ(DescribeStateLock(back),
            "alice@trainhost, pid 4242, since 2025-11-25 21:54:35 UTC (run 20261125-215435-4242)");
}

TEST(StateLockRecordTest, NamesWhatIsWrong) {
  EXPECT_THAT(ParseStateLock("not json"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseStateLock(R"({"host":"h","user":"u","pid":0,"since":"x","run_id":"r"})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("pid")));
  EXPECT_THAT(ParseStateLock(R"({"host":"h","user":"u","pid":3,"since":"x","run_id":"r"})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("since")));
}

}  // namespace
}  // namespace fleetplan
