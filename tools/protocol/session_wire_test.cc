#include "tools/protocol/session_wire.h"

#include <string>

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

TEST(SessionWireTest, FramesSurviveArrivingByteByByte) {
  std::string binary("a\0b\xff", 4);
  std::string stream = EncodeFrame(FrameType::kWrite, {"/w/x", "644", binary}) +
                       EncodeFrame(FrameType::kOk) + EncodeFrame(FrameType::kRead, {""});
  FrameReader reader;
  std::vector<Frame> frames;
  for (char byte : stream) {
    reader.Feed(std::string(1, byte));
    absl::StatusOr<std::optional<Frame>> next = reader.Next();
    ASSERT_TRUE(next.ok()) << next.status();
    if (next->has_value()) frames.push_back(**next);
  }
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].type, FrameType::kWrite);
  EXPECT_EQ(frames[0].fields, (std::vector<std::string>{"/w/x", "644", binary}));
  EXPECT_EQ(frames[1].type, FrameType::kOk);
  EXPECT_TRUE(frames[1].fields.empty());
  EXPECT_EQ(frames[2].fields, std::vector<std::string>{""});
  EXPECT_EQ(reader.pending(), 0u);
}

TEST(SessionWireTest, AHalfFrameIsNotAFrame) {
  std::string frame = EncodeFrame(FrameType::kOutput, {"hello"});
  FrameReader reader;
  reader.Feed(frame.substr(0, frame.size() - 1));
  absl::StatusOr<std::optional<Frame>> next = reader.Next();
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE(next->has_value());
  EXPECT_EQ(reader.pending(), frame.size() - 1);
}

TEST(SessionWireTest, AnOversizedLengthBreaksTheStream) {
  FrameReader reader;
  reader.Feed(std::string("o\x7f\xff\xff\xff", 5));
  absl::StatusOr<std::optional<Frame>> next = reader.Next();
  EXPECT_EQ(next.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(next.status().message().find("broken"), absl::string_view::npos);
}

TEST(SessionWireTest, FieldsOverrunningTheirFrameBreakTheStream) {
  // A payload of 6 bytes whose one field claims 9.
  FrameReader reader;
  reader.Feed(std::string("o\0\0\0\x06\0\0\0\x09xy", 11));
  EXPECT_EQ(reader.Next().status().code(), absl::StatusCode::kDataLoss);
}

TEST(SessionWireTest, NumbersAreChecked) {
  Frame frame{FrameType::kStatus, {"17", "x"}};
  EXPECT_EQ(*FrameNumber(frame, 0, "status"), 17u);
  EXPECT_EQ(FrameNumber(frame, 1, "status").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FrameNumber(frame, 2, "status").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fleetplan
