#include "tools/protocol/session_message.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

// The one frame in `bytes`.
Frame Decode(const std::string& bytes) {
  FrameReader reader;
  reader.Feed(bytes);
  absl::StatusOr<std::optional<Frame>> frame = reader.Next();
  EXPECT_TRUE(frame.ok() && frame->has_value());
  return frame.ok() && frame->has_value() ? **frame : Frame();
}

template <typename T>
T RoundTrip(const T& request) {
  absl::StatusOr<SessionRequest> back =
      ParseSessionRequest(Decode(EncodeSessionRequest(request)));
  EXPECT_THAT(back, IsOk());
  if (!back.ok() || !std::holds_alternative<T>(*back)) return T();
  return std::get<T>(*back);
}

TEST(SessionMessageTest, RequestsRoundTrip) {
  EXPECT_EQ(RoundTrip(ReadRequest{{"/a", "/b c"}}).paths,
            (std::vector<std::string>{"/a", "/b c"}));
  WriteRequest write = RoundTrip(WriteRequest{"/w/f", 0600, std::string("x\0y", 3)});
  EXPECT_EQ(write.path, "/w/f");
  EXPECT_EQ(write.mode, 0600u);
  EXPECT_EQ(write.content, std::string("x\0y", 3));
  PutRequest put = RoundTrip(PutRequest{"/w", 3});
  EXPECT_EQ(put.count, 3u);
  RemoveRequest remove = RoundTrip(RemoveRequest{"/w", {"a", "b/c"}});
  EXPECT_EQ(remove.paths, (std::vector<std::string>{"a", "b/c"}));
  RunRequest run;
  run.command = "echo hi";
  run.cwd = "/w";
  run.hold_stdin = true;
  run.stdin_grace = absl::Milliseconds(100);
  run.term_grace = absl::Seconds(2);
  run.env = {{"A", "1=2"}, {"B", ""}};
  RunRequest ran = RoundTrip(run);
  EXPECT_EQ(ran.command, "echo hi");
  EXPECT_TRUE(ran.hold_stdin);
  EXPECT_EQ(ran.stdin_grace, absl::Milliseconds(100));
  EXPECT_EQ(ran.term_grace, absl::Seconds(2));
  EXPECT_EQ(ran.env, run.env);
  VerifyRequest verify = RoundTrip(VerifyRequest{"/w", "/m", "/r", "hash\n"});
  EXPECT_EQ(verify.record, "hash\n");
  WorkdirRequest workdir = RoundTrip(WorkdirRequest{"/w", "/w/.fleetplan", 1u << 30});
  EXPECT_EQ(workdir.bytes, 1u << 30);
}

TEST(SessionMessageTest, FileHeadersAndContentsRoundTrip) {
  absl::StatusOr<PutFileHeader> header =
      ParsePutFileHeader(Decode(EncodePutFileHeader({"a/x.sh", 0755, 12})));
  ASSERT_THAT(header, IsOk());
  EXPECT_EQ(header->path, "a/x.sh");
  EXPECT_EQ(header->mode, 0755u);
  EXPECT_EQ(header->size, 12u);
  ContentsAnswer answer{{{FileContent::Kind::kOk, "abc"},
                         {FileContent::Kind::kMissing, "no such file"},
                         {FileContent::Kind::kError, "denied"}}};
  absl::StatusOr<ContentsAnswer> back = ParseContents(Decode(EncodeContents(answer)));
  ASSERT_THAT(back, IsOk());
  ASSERT_EQ(back->files.size(), 3u);
  EXPECT_EQ(back->files[1].kind, FileContent::Kind::kMissing);
  EXPECT_EQ(back->files[2].text, "denied");
}

TEST(SessionMessageTest, FramesOfAnotherShapeAreRefused) {
  EXPECT_THAT(ParseSessionRequest({FrameType::kWrite, {"/a", "420"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "write: 3 fields expected"));
  EXPECT_THAT(ParseSessionRequest({FrameType::kPut, {"/a", "many"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("put's count")));
  EXPECT_THAT(ParseSessionRequest({FrameType::kRun, {"true", "", "0", "0"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "run: 5 fields expected"));
  EXPECT_THAT(ParseSessionRequest({FrameType::kRun, {"true", "", "0", "0", "0", "=x"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("NAME=VALUE")));
  EXPECT_THAT(ParseSessionRequest({FrameType::kRemove, {}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "remove: a root expected"));
  EXPECT_THAT(ParseSessionRequest({FrameType::kOk, {}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "unexpected frame 'k'"));
  EXPECT_THAT(ParsePutFileHeader({FrameType::kData, {"x"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "put: a file header expected"));
  EXPECT_THAT(ParseContents({FrameType::kContents, {"ok"}}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fleetplan
