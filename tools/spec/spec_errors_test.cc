#include "tools/spec/spec_errors.h"

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

}  // namespace
}  // namespace fleetplan
