#include "tools/protocol/hold_wire.h"

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

Frame Decode(const std::string& bytes) {
  FrameReader reader;
  reader.Feed(bytes);
  absl::StatusOr<std::optional<Frame>> frame = reader.Next();
  EXPECT_TRUE(frame.ok() && frame->has_value());
  return **frame;
}

TEST(HoldWireTest, AttachRoundTrips) {
  HoldAttach attach{"node-a", "0123abcd", 7, true, "/w/.fleetplan/bin/fleetplan-agent"};
  absl::StatusOr<HoldAttach> back = ParseAttach(Decode(EncodeAttach(attach)));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->node, "node-a");
  EXPECT_EQ(back->identity, "0123abcd");
  EXPECT_EQ(back->connect_timeout_s, 7);
  EXPECT_TRUE(back->accept_new_host_keys);
  EXPECT_EQ(back->agent_path, "/w/.fleetplan/bin/fleetplan-agent");
  attach.agent_path = "";
  back = ParseAttach(Decode(EncodeAttach(attach)));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->agent_path, "");
}

TEST(HoldWireTest, RefusesAnotherVersionOrKind) {
  EXPECT_FALSE(ParseAttach(Decode(EncodeFrame(FrameType::kAttach,
                                              {"fleetplan-hold 0", "a", "b", "10", "0", ""})))
                   .ok());
  // A version 1 attach (no agent path) from an older command.
  EXPECT_FALSE(ParseAttach(Decode(EncodeFrame(FrameType::kAttach,
                                              {"fleetplan-hold 1", "a", "b", "10", "0"})))
                   .ok());
  EXPECT_FALSE(ParseAttach(Decode(EncodeFrame(FrameType::kAttach,
                                              {kHoldGreeting, "a", "b", "10", "0", "bin/agent"})))
                   .ok());
  EXPECT_FALSE(ParseAttach(Decode(EncodeFrame(FrameType::kRead, {kHoldGreeting}))).ok());
  EXPECT_FALSE(ParseAttach(Decode(EncodeFrame(FrameType::kAttach,
                                              {kHoldGreeting, "a", "b", "-1", "0", ""})))
                   .ok());
  EXPECT_FALSE(ParseAttach(Decode(EncodeFrame(FrameType::kAttach,
                                              {kHoldGreeting, "a", "b", "10", "yes", ""})))
                   .ok());
}

TEST(HoldWireTest, StatusFramesKeepCodeAndMessage) {
  absl::Status back =
      ParseStatusFrame(Decode(EncodeStatusFrame(absl::UnavailableError("node down"))));
  EXPECT_TRUE(absl::IsUnavailable(back));
  EXPECT_EQ(back.message(), "node down");
  EXPECT_TRUE(absl::IsDataLoss(
      ParseStatusFrame(Decode(EncodeFrame(FrameType::kError, {"99", "x"})))));
  EXPECT_TRUE(absl::IsDataLoss(ParseStatusFrame(Decode(EncodeFrame(FrameType::kOk)))));
}

}  // namespace
}  // namespace fleetplan
