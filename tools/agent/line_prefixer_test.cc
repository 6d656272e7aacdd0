#include "tools/agent/line_prefixer.h"

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

TEST(LinePrefixerTest, EmitsOnlyWholePrefixedLines) {
  LinePrefixer prefixer("[n/3] ");
  EXPECT_EQ(prefixer.Feed("hel"), "");
  EXPECT_EQ(prefixer.Feed("lo\nwor"), "[n/3] hello\n");
  EXPECT_EQ(prefixer.Feed("ld\n\nx\n"), "[n/3] world\n[n/3] \n[n/3] x\n");
  EXPECT_EQ(prefixer.Flush(), "");
}

TEST(LinePrefixerTest, FlushTerminatesTheLastLine) {
  LinePrefixer prefixer("> ");
  EXPECT_EQ(prefixer.Feed("a\nno newline"), "> a\n");
  EXPECT_EQ(prefixer.Flush(), "> no newline\n");
  EXPECT_EQ(prefixer.Flush(), "");
}

TEST(LinePrefixerTest, CutsOverlongLines) {
  LinePrefixer prefixer("> ", 4);
  EXPECT_EQ(prefixer.Feed("ab"), "");
  EXPECT_EQ(prefixer.Feed("cdefghij\n"), "> abcd\n> efgh\n> ij\n");
  EXPECT_EQ(prefixer.Feed("wxyz\n"), "> wxyz\n");
}

}  // namespace
}  // namespace fleetplan
