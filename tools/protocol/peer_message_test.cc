#include "tools/protocol/peer_message.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

PeerMessage RoundTrip(const PeerMessage& message) {
  absl::StatusOr<PeerMessage> parsed = ParsePeerMessage(SerializePeerMessage(message));
  EXPECT_THAT(parsed, IsOk());
  return parsed.ok() ? *parsed : PeerMessage{};
}

TEST(PeerMessageTest, KeepsTheWireFormat) {
  EXPECT_EQ(SerializePeerMessage(HelloMessage{"b"}), R"({"node":"b","nproc":1,"t":"hello"})");
  EXPECT_EQ(SerializePeerMessage(StartMessage{1, "", {{"a", 2}, {"c", 1}}}),
            R"({"gen":1,"members":[{"node":"a","nproc":2},{"node":"c","nproc":1}],)"
            R"("t":"start","why":""})");
  EXPECT_EQ(SerializePeerMessage(HeartbeatMessage{}), R"({"t":"hb"})");
  EXPECT_EQ(SerializePeerMessage(StopMessage{}), R"({"t":"stop"})");
  EXPECT_EQ(SerializePeerMessage(StopMessage{2}), R"({"gen":2,"t":"stop"})");
  EXPECT_EQ(SerializePeerMessage(EndedMessage{1, {{0, 0}, {1, 3}}, {{1, 3}}}),
            R"({"error":null,"failed":{"1":3},"gen":1,"statuses":{"0":0,"1":3},"t":"ended"})");
  EXPECT_EQ(SerializePeerMessage(EndMessage{JobPhase::kSucceeded, 0, std::nullopt}),
            R"({"exit_status":0,"failure":null,"state":"succeeded","t":"end"})");
}

TEST(PeerMessageTest, RoundTripsEveryType) {
  EXPECT_EQ(std::get<HelloMessage>(RoundTrip(HelloMessage{"b"})).node, "b");
  EXPECT_EQ(std::get<StartedMessage>(RoundTrip(StartedMessage{4})).generation, 4);
  EndedMessage ended = std::get<EndedMessage>(RoundTrip(EndedMessage{2, {{5, 0}}, {{6, 137}}}));
  EXPECT_EQ(ended.generation, 2);
  EXPECT_EQ(ended.statuses, (RankStatuses{{5, 0}}));
  EXPECT_EQ(ended.failed, (RankStatuses{{6, 137}}));
  EXPECT_FALSE(ended.error.has_value());
  RankError error{"ValueError", "bad shard 7", "/w/train.py", 3, "load", ""};
  ended = std::get<EndedMessage>(RoundTrip(EndedMessage{2, {{6, 1}}, {{6, 1}}, error}));
  EXPECT_EQ(ended.error, error);
  EXPECT_FALSE(std::get<StopMessage>(RoundTrip(StopMessage{})).generation.has_value());
  EXPECT_EQ(std::get<StopMessage>(RoundTrip(StopMessage{3})).generation, 3);
  EXPECT_TRUE(std::holds_alternative<HeartbeatMessage>(RoundTrip(HeartbeatMessage{})));
  WelcomeMessage welcome = std::get<WelcomeMessage>(RoundTrip(WelcomeMessage{"r-1", "a"}));
  EXPECT_EQ(welcome.run_id, "r-1");
  EXPECT_EQ(welcome.node, "a");
  StartMessage start = std::get<StartMessage>(RoundTrip(StartMessage{1, "rank 3 failed"}));
  EXPECT_EQ(start.generation, 1);
  EXPECT_EQ(start.why, "rank 3 failed");
  EXPECT_TRUE(start.members.empty());
  start = std::get<StartMessage>(RoundTrip(StartMessage{2, "lost d", {{"a", 2}, {"e", 3}}}));
  ASSERT_EQ(start.members.size(), 2u);
  EXPECT_EQ(start.members[1].node, "e");
  EXPECT_EQ(start.members[1].nproc, 3);
  HelloMessage hello = std::get<HelloMessage>(RoundTrip(HelloMessage{"d", 4}));
  EXPECT_EQ(hello.nproc, 4);
  EndMessage end = std::get<EndMessage>(
      RoundTrip(EndMessage{JobPhase::kFailed, 7, JobFailure{"b", 3, 7, "why"}}));
  EXPECT_EQ(end.phase, JobPhase::kFailed);
  EXPECT_EQ(end.exit_status, 7);
  ASSERT_TRUE(end.failure.has_value());
  EXPECT_EQ(end.failure->node, "b");
  EXPECT_EQ(end.failure->rank, 3);
  EXPECT_EQ(end.failure->status, 7);
  EXPECT_EQ(end.failure->reason, "why");
  EXPECT_EQ(std::get<ProgressMessage>(RoundTrip(ProgressMessage{5})).generation, 5);
  EXPECT_EQ(std::get<CollectStacksMessage>(RoundTrip(CollectStacksMessage{6})).generation, 6);
  StacksMessage stacks = std::get<StacksMessage>(RoundTrip(StacksMessage{
      1, {RankStack{4, "c", StackWhere{"load_shard", "data.py", 88, "sleep"}, {"py-bt: x"}}}}));
  EXPECT_EQ(stacks.generation, 1);
  ASSERT_EQ(stacks.ranks.size(), 1u);
  EXPECT_EQ(stacks.ranks[0].rank, 4);
  EXPECT_EQ(stacks.ranks[0].where, (StackWhere{"load_shard", "data.py", 88, "sleep"}));
  EXPECT_EQ(stacks.ranks[0].skips, std::vector<std::string>{"py-bt: x"});
  StackSummary summary = GroupStacks(stacks.ranks);
  end = std::get<EndMessage>(RoundTrip(EndMessage{
      JobPhase::kFailed, 124, JobFailure{"", -1, 124, "no rank made progress for 20s", {}, summary}}));
  ASSERT_TRUE(end.failure.has_value() && end.failure->stacks.has_value());
  EXPECT_EQ(SummaryLines(*end.failure->stacks), SummaryLines(summary));
}


void ExpectRefused(absl::string_view line, absl::string_view why) {
  absl::StatusOr<PeerMessage> parsed = ParsePeerMessage(line);
  ASSERT_FALSE(parsed.ok()) << line;
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << line;
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(why)) << line;
}

TEST(PeerMessageTest, RefusesAStacksReportThatIsNotOne) {
  ExpectRefused(R"({"t":"stacks","gen":1,"ranks":{}})", "\"ranks\" is not a list");
  ExpectRefused(R"({"t":"stacks","gen":1,"ranks":[{"rank":-2,"node":"a","where":null,"skips":[]}]})",
                "rank");
  ExpectRefused(R"({"t":"progress"})", "\"gen\"");
}

TEST(PeerMessageTest, RefusesWhatIsNoMessage) {
  ExpectRefused("", "not a JSON object");
  ExpectRefused("not json", "not a JSON object");
  ExpectRefused("[1]", "not a JSON object");
  ExpectRefused(R"({"node":"b"})", R"("t" is missing)");
  ExpectRefused(R"({"t":7})", R"("t" is missing or not a string)");
  ExpectRefused(R"({"t":"reboot"})", "unknown type \"reboot\"");
}

TEST(PeerMessageTest, RefusesFieldsOfAnotherType) {
  ExpectRefused(R"({"t":"hello","node":7})", R"(peer message 'hello': "node" is not a string)");
  ExpectRefused(R"({"t":"hello"})", R"("node" is missing)");
  ExpectRefused(R"({"t":"hello","node":"b","nproc":0})", R"("nproc")");
  ExpectRefused(R"({"t":"start","gen":1,"why":"","members":{}})", R"("members" is not a list)");
  ExpectRefused(R"({"t":"start","gen":1,"why":"","members":[{"node":"a"}]})",
                R"("nproc" is missing)");
  ExpectRefused(R"({"t":"started","gen":"1"})", R"("gen" is not an integer)");
  ExpectRefused(R"({"t":"start","gen":1.5,"why":""})", R"("gen" is not an integer)");
  ExpectRefused(R"({"t":"stop","gen":null})", R"("gen" is not an integer)");
  ExpectRefused(R"({"t":"ended","gen":1,"statuses":[],"failed":{}})",
                R"("statuses" is not an object)");
  ExpectRefused(R"({"t":"welcome","run_id":["r"],"node":"a"})", R"("run_id" is not a string)");
  ExpectRefused(R"({"t":"ended","gen":1,"statuses":{},"failed":{}})", R"("error" is missing)");
  ExpectRefused(R"({"t":"ended","gen":1,"statuses":{},"failed":{},"error":{"type":"E"}})",
                R"("message" is missing)");
  ExpectRefused(R"({"t":"end","state":"failed","exit_status":1,"failure":"b"})",
                R"("failure" is not an object or null)");
  ExpectRefused(R"({"t":"end","state":"failed","exit_status":1,"failure":{"node":"b",)"
                R"("rank":"3","status":1,"reason":""}})",
                R"("rank" is not an integer)");
}

TEST(PeerMessageTest, RefusesValuesOutOfRange) {
  std::string long_message(kMaxErrorMessageBytes + 1, 'm');
  ExpectRefused(absl::StrCat(R"({"t":"ended","gen":1,"statuses":{},"failed":{},"error":)",
                             R"({"type":"E","message":")", long_message,
                             R"(","file":"","line":0,"function":"","log_tail":""}})"),
                R"("message" is longer than 4096 bytes)");
  ExpectRefused(R"({"t":"started","gen":-1})", R"("gen" is -1, not in 0..)");
  ExpectRefused(R"({"t":"started","gen":4294967296})", "not an integer in the range of int");
  ExpectRefused(R"({"t":"started","gen":18446744073709551615})",
                "not an integer in the range of int");
  ExpectRefused(R"({"t":"ended","gen":0,"statuses":{"-1":0},"failed":{}})",
                "a key that is not a rank");
  ExpectRefused(R"({"t":"ended","gen":0,"statuses":{"01":0},"failed":{}})",
                "a key that is not a rank");
  ExpectRefused(R"({"t":"ended","gen":0,"statuses":{"0":256},"failed":{}})",
                "a status that is not in 0..255");
  ExpectRefused(R"({"t":"end","state":"exploded","exit_status":1,"failure":null})",
                R"("state" is not a job state)");
  ExpectRefused(R"({"t":"end","state":"failed","exit_status":-1,"failure":null})",
                R"("exit_status" is -1, not in 0..255)");
  ExpectRefused(R"({"t":"end","state":"failed","exit_status":1,"failure":{"node":"b",)"
                R"("rank":-2,"status":1,"reason":""}})",
                R"("rank" is -2)");
}

TEST(PeerMessageTest, IgnoresFieldsItDoesNotKnow) {
  absl::StatusOr<PeerMessage> parsed = ParsePeerMessage(R"({"t":"hb","extra":[1,2]})");
  ASSERT_THAT(parsed, IsOk());
  EXPECT_TRUE(std::holds_alternative<HeartbeatMessage>(*parsed));
}

}  // namespace
}  // namespace fleetplan
