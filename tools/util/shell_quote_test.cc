#include "tools/util/shell_quote.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/sh_test_util.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

// Values a spec may carry that a careless quoter would let the shell act on.
std::vector<std::string> HostileValues(const std::string& dir) {
  return {
      absl::StrCat("$(touch ", dir, "/substituted)"),
      absl::StrCat("`touch ", dir, "/backquoted`"),
      "$(rm -rf ~)",
      "`id`",
      "'",
      "''",
      "\"",
      "\\",
      "\\n",
      "a\nb",
      "\n",
      "$HOME",
      "${HOME}",
      "$",
      "${",
      "a;b",
      "; echo injected",
      "",
      " ",
      "  two  spaces  ",
      "*",
      "~",
      "~/x",
      "a|b&c>d<e",
      "héllo wörld ✓",
      "\t\x01\x7f\xff",
      "it's \"quoted\" \\ $(x) `y` ${z}",
  };
}

// Prints the word through a real /bin/sh and returns the bytes it yields.
std::string RoundTrip(const std::string& word) {
  auto output = RunSh(absl::StrCat("printf %s ", word));
  EXPECT_THAT(output, IsOk()) << "word: " << word;
  return output.ok() ? *output : "<failed>";
}

TEST(ShellQuoteTest, SafeWordsStayBare) {
  EXPECT_EQ(ShellQuote("abc/-_.=:,+@%"), "abc/-_.=:,+@%");
  EXPECT_EQ(ShellQuote("--node=head"), "--node=head");
}

TEST(ShellQuoteTest, OtherWordsAreSingleQuoted) {
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("~"), "'~'");
}

TEST(ShellQuoteTest, HostileValuesRoundTripThroughShByteForByte) {
  std::string dir = MakeTestDir();
  for (const std::string& value : HostileValues(dir)) {
    EXPECT_EQ(RoundTrip(ShellQuote(value)), value) << "value: " << value;
  }
  EXPECT_FALSE(FileExists(dir + "/substituted"));
  EXPECT_FALSE(FileExists(dir + "/backquoted"));
}

TEST(ShellWordExpandingVarsTest, ExpandsOnlyVariableReferences) {
  EXPECT_EQ(ShellWordExpandingVars("$LD_LIBRARY_PATH:/usr/local/cuda/lib64"),
            "\"${LD_LIBRARY_PATH}\":/usr/local/cuda/lib64");
  EXPECT_EQ(ShellWordExpandingVars("${A}x$B"), "\"${A}\"x\"${B}\"");
  EXPECT_EQ(ShellWordExpandingVars(""), "''");
  EXPECT_EQ(ShellWordExpandingVars("$(id)"), "'$(id)'");
}

TEST(ShellWordExpandingVarsTest, VariablesExpandOnTheNode) {
  auto output = RunSh(absl::StrCat(
      "FP_A='x y'; FP_B='*'; unset FP_UNSET; printf %s ",
      ShellWordExpandingVars("$FP_A:${FP_B}/$FP_UNSET.${FP_A}end$")));
  ASSERT_THAT(output, IsOk());
  // Expanded values are neither split nor globbed; `$` at the end is literal.
  EXPECT_EQ(*output, "x y:*/.x yend$");
}

TEST(ShellWordExpandingVarsTest, EverythingElseArrivesVerbatim) {
  std::string dir = MakeTestDir();
  for (const std::string& value : HostileValues(dir)) {
    // Values with no `$NAME` reference must come through unchanged.
    if (value.find("$H") != std::string::npos ||
        value.find("${H") != std::string::npos ||
        value.find("${z}") != std::string::npos) {
      continue;
    }
    EXPECT_EQ(RoundTrip(ShellWordExpandingVars(value)), value)
        << "value: " << value;
  }
  EXPECT_EQ(RoundTrip(ShellWordExpandingVars("`id`;$(id)\\'\"")),
            "`id`;$(id)\\'\"");
  EXPECT_FALSE(FileExists(dir + "/substituted"));
  EXPECT_FALSE(FileExists(dir + "/backquoted"));
}

TEST(ShellWordExpandingVarsTest, ExpandedValueIsNotReevaluated) {
  std::string dir = MakeTestDir();
  auto output = RunSh(absl::StrCat("FP_EVIL='$(touch ", dir,
                                   "/again)'; printf %s ",
                                   ShellWordExpandingVars("<$FP_EVIL>")));
  ASSERT_THAT(output, IsOk());
  EXPECT_EQ(*output, absl::StrCat("<$(touch ", dir, "/again)>"));
  EXPECT_FALSE(FileExists(dir + "/again"));
}

TEST(SplitShellWordsTest, ReadsQuotedWordsBack) {
  for (const std::string& value : HostileValues("/tmp")) {
    EXPECT_THAT(SplitShellWords(absl::StrCat("a ", ShellQuote(value), "  b")),
                IsOkAndHolds(std::vector<std::string>{"a", value, "b"}))
        << value;
  }
}

TEST(SplitShellWordsTest, DoubleQuotesAndBackslashes) {
  EXPECT_THAT(SplitShellWords("x\\ y \"a \\\" $b\" c'd'e"),
              IsOkAndHolds(std::vector<std::string>{"x y", "a \" $b", "cde"}));
  EXPECT_THAT(SplitShellWords("a && b"),
              IsOkAndHolds(std::vector<std::string>{"a", "&&", "b"}));
  EXPECT_THAT(SplitShellWords(" "), IsOkAndHolds(std::vector<std::string>{}));
}

TEST(SplitShellWordsTest, UnterminatedQuotes) {
  EXPECT_THAT(SplitShellWords("a 'b"), StatusIs(absl::StatusCode::kInvalidArgument,
                                                 testing::HasSubstr("unterminated '")));
  EXPECT_THAT(SplitShellWords("\"b"), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fleetplan
