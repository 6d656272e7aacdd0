#include "tools/cli/terminal_screen.h"

#include <unistd.h>

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

TEST(ScreenFrameTest, LinesAreDrawnFromTheTopAndCutToTheWidth) {
  EXPECT_EQ(ScreenFrame({"abcdef", "xy"}, 10, 4),
            "\x1b[H" "abcd\x1b[K\r\n" "xy\x1b[K\r\n" "\x1b[J");
}

TEST(ScreenFrameTest, ColourCodesTakeNoColumnAndAreEnded) {
  EXPECT_EQ(ScreenFrame({"ab\x1b[33mcdef\x1b[0m"}, 10, 4),
            "\x1b[H" "ab\x1b[33mcd\x1b[0m\x1b[K\r\n" "\x1b[J");
  EXPECT_EQ(ScreenFrame({"\x1b[33mab\x1b[0m"}, 10, 4),
            "\x1b[H" "\x1b[33mab\x1b[0m\x1b[K\r\n" "\x1b[J");
  // A UTF-8 character is one column.
  EXPECT_EQ(ScreenFrame({"n\xc3\xb6" "de"}, 10, 3), "\x1b[H" "n\xc3\xb6" "d\x1b[K\r\n" "\x1b[J");
}

TEST(ScreenFrameTest, WhatDoesNotFitIsCounted) {
  EXPECT_EQ(ScreenFrame({"1", "2", "3", "4"}, 3, 80),
            "\x1b[H" "1\x1b[K\r\n" "2\x1b[K\r\n"
            "... 2 more lines (a taller window shows them)\x1b[K" "\x1b[J");
}

TEST(TerminalScreenTest, APipeIsNoTerminal) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  EXPECT_EQ(TerminalScreen::Open(fds[0], fds[1]).status().code(),
            absl::StatusCode::kFailedPrecondition);
  close(fds[0]);
  close(fds[1]);
}

}  // namespace
}  // namespace fleetplan
