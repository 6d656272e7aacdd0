#include "tools/spec/spec_errors.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

TEST(SpecErrorsTest, OkWhenEmpty) {
  SpecErrors errors("a = 1\n", "/s.toml");
  EXPECT_TRUE(errors.empty());
  EXPECT_THAT(errors.ToStatus(), IsOk());
}

TEST(SpecErrorsTest, ShowsLineAndCaretUnderTheColumn) {
  SpecErrors errors("a = 1\nbb = \"x\"\n", "/s.toml");
  errors.Add(2, 6, "bb", "expected an integer, got a string");
  EXPECT_EQ(errors.ToStatus().message(),
            "/s.toml:2:6: error: bb: expected an integer, got a string\n"
            "  bb = \"x\"\n"
            "       ^");
  EXPECT_EQ(errors.ToStatus().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SpecErrorsTest, KeepsEveryErrorInOrder) {
  SpecErrors errors("x\ny\n", "/s.toml");
  errors.Add(1, 1, "x", "first");
  errors.Add(2, 1, "", "second");
  EXPECT_EQ(errors.ToStatus().message(),
            "/s.toml:1:1: error: x: first\n  x\n  ^\n"
            "/s.toml:2:1: error: second\n  y\n  ^");
}

// A line of `n` characters: "k = [" and digits.
std::string LongLine(int n) {
  std::string line = "k = [";
  while (static_cast<int>(line.size()) < n) line.push_back('0' + line.size() % 10);
  return line;
}

TEST(SpecErrorsTest, CutsALongLineAroundTheCaretOnBothSides) {
  std::string text = LongLine(200000) + "\n";
  SpecErrors errors(text, "/s.toml");
  errors.Add(1, 100001, "k", "bad");
  // Characters 99951 to 100050, the caret under the 51st of them.
  EXPECT_EQ(errors.ToStatus().message(),
            absl::StrCat("/s.toml:1:100001: error: k: bad\n  ...", text.substr(99950, 100),
                         "...\n  ", std::string(3 + 50, ' '), "^"));
}

TEST(SpecErrorsTest, CutsOnlyTheFarSideNearTheStartOrEnd) {
  std::string line = LongLine(300);
  SpecErrors errors(line, "/s.toml");
  errors.Add(1, 3, "", "near the start");
  errors.Add(1, 298, "", "near the end");
  errors.Add(1, 301, "", "just past the end");
  EXPECT_EQ(errors.ToStatus().message(),
            absl::StrCat("/s.toml:1:3: error: near the start\n  ", line.substr(0, 100),
                         "...\n    ^\n",
                         "/s.toml:1:298: error: near the end\n  ...", line.substr(200),
                         "\n  ", std::string(3 + 97, ' '), "^\n",
                         "/s.toml:1:301: error: just past the end\n  ...", line.substr(200),
                         "\n  ", std::string(3 + 100, ' '), "^"));
}

TEST(SpecErrorsTest, CountsColumnsInCharactersAndNeverCutsOneInHalf) {
  // "é" is two bytes, one column.
  std::string line;
  for (int i = 0; i < 150; ++i) line += "\xc3\xa9";
  SpecErrors errors(line, "/s.toml");
  errors.Add(1, 150, "", "x");
  std::string shown;
  for (int i = 0; i < 100; ++i) shown += "\xc3\xa9";
  EXPECT_EQ(errors.ToStatus().message(),
            absl::StrCat("/s.toml:1:150: error: x\n  ...", shown, "\n  ",
                         std::string(3 + 99, ' '), "^"));
}

TEST(SpecErrorsTest, NeverWritesControlCharactersOut) {
  SpecErrors errors("\"a\x1b[2J\" = 1\tz\x07\n", "/s.toml");
  errors.Add(1, 12, "a\x1b[2J", "unknown \x7f");
  EXPECT_EQ(errors.ToStatus().message(),
            "/s.toml:1:12: error: a\\u001b[2J: unknown \\u007f\n"
            "  \"a?[2J\" = 1 z?\n"
            "             ^");
}

}  // namespace
}  // namespace fleetplan
