#include "tools/apply/output_buffer.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

TEST(OutputBufferTest, JoinsChunksIntoLinesAndKeepsTheTail) {
  std::vector<std::string> lines;
  OutputBuffer buffer(2, [&](absl::string_view line) { lines.emplace_back(line); });
  buffer.Append("on");
  buffer.Append("e\ntwo\nthr");
  buffer.Append("ee\nfour");
  EXPECT_THAT(lines, ::testing::ElementsAre("one", "two", "three"));
  EXPECT_EQ(buffer.Tail(), "two\nthree\nfour");
  buffer.Flush();
  EXPECT_THAT(lines, ::testing::ElementsAre("one", "two", "three", "four"));
  EXPECT_EQ(buffer.Tail(), "three\nfour");
  EXPECT_EQ(buffer.all(), "one\ntwo\nthree\nfour");
}

}  // namespace
}  // namespace fleetplan
