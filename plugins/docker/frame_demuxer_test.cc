#include "plugins/docker/frame_demuxer.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

std::string Frame(int stream, const std::string& payload) {
  std::string out(8, '\0');
  out[0] = static_cast<char>(stream);
  uint32_t n = payload.size();
  out[4] = static_cast<char>(n >> 24);
  out[5] = static_cast<char>(n >> 16);
  out[6] = static_cast<char>(n >> 8);
  out[7] = static_cast<char>(n);
  return out + payload;
}

using Pieces = std::vector<std::pair<int, std::string>>;

TEST(FrameDemuxerTest, SplitsFramesFedWhole) {
  Pieces got;
  FrameDemuxer demuxer([&](int stream, absl::string_view payload) {
    got.emplace_back(stream, std::string(payload));
  });
  demuxer.Feed(Frame(1, "out\n") + Frame(2, "err\n"));
  EXPECT_THAT(got, ::testing::ElementsAre(std::make_pair(1, "out\n"),
                                          std::make_pair(2, "err\n")));
  EXPECT_FALSE(demuxer.InsideFrame());
}

TEST(FrameDemuxerTest, ReassemblesByteByByte) {
  // A payload longer than 255 bytes checks the big-endian size, and a NUL
  // byte in it that payloads are binary.
  std::string big(300, 'x');
  big[7] = '\0';
  std::string stream = Frame(1, big) + Frame(2, "tail");
  std::string out, err;
  FrameDemuxer demuxer([&](int s, absl::string_view payload) {
    (s == 1 ? out : err).append(payload.data(), payload.size());
  });
  for (char c : stream) {
    demuxer.Feed(absl::string_view(&c, 1));
  }
  EXPECT_EQ(out, big);
  EXPECT_EQ(err, "tail");
  EXPECT_FALSE(demuxer.InsideFrame());
}

TEST(FrameDemuxerTest, ReportsATruncatedFrame) {
  FrameDemuxer demuxer([](int, absl::string_view) {});
  demuxer.Feed(Frame(1, "abcdef").substr(0, 10));
  EXPECT_TRUE(demuxer.InsideFrame());
}

}  // namespace
}  // namespace fleetplan
