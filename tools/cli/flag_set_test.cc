#include "tools/cli/flag_set.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Options {
  bool json = false;
  bool accept = false;
  std::string out;
  std::string color = "auto";
  int parallelism = 10;
  absl::Duration timeout = absl::Minutes(10);
  std::vector<std::string> nodes;
};

class FlagSetTest : public ::testing::Test {
 protected:
  FlagSetTest() : flags_(Doc()) {
    flags_.Switch("json", &options_.json, "JSON.");
    flags_.Switch("accept-new-host-keys", &options_.accept, "Accept.");
    flags_.Text("out", "FILE", &options_.out, "Save.", ValueKind::kFile);
    flags_.Choice("color", &options_.color, {"auto", "always", "never"}, "Colour.");
    flags_.Number("parallelism", "N", &options_.parallelism, "At once.");
    flags_.Duration("step-timeout", &options_.timeout, "Bound.");
    flags_.List("node", "NAME", &options_.nodes, "Only.", ValueKind::kNode);
  }

  static CommandDoc Doc() {
    CommandDoc doc;
    doc.min_operands = 1;
    doc.max_operands = 3;
    doc.operands_expected = "expected one to three operands";
    return doc;
  }

  absl::Status Parse(std::vector<std::string> args) {
    operands_.clear();
    return flags_.ParseArgs(args, &operands_);
  }

  Options options_;
  FlagSet flags_;
  std::vector<std::string> operands_;
};

TEST_F(FlagSetTest, FlagsAndOperandsMixInAnyOrder) {
  ASSERT_THAT(Parse({"--json", "a.toml", "--parallelism=3", "--out", "plan.json"}), IsOk());
  EXPECT_TRUE(options_.json);
  EXPECT_EQ(options_.parallelism, 3);
  EXPECT_EQ(options_.out, "plan.json");
  EXPECT_THAT(operands_, ElementsAre("a.toml"));
}

TEST_F(FlagSetTest, AcceptsTheSpellingsOfEarlierVersions) {
  ASSERT_THAT(Parse({"--accept_new_host_keys", "-out", "p.json", "--step_timeout=90s", "a"}),
              IsOk());
  EXPECT_TRUE(options_.accept);
  EXPECT_EQ(options_.out, "p.json");
  EXPECT_EQ(options_.timeout, absl::Seconds(90));
}

TEST_F(FlagSetTest, SwitchesTakeOptionalValuesAndNegations) {
  ASSERT_THAT(Parse({"--json=true", "a"}), IsOk());
  EXPECT_TRUE(options_.json);
  ASSERT_THAT(Parse({"--no-json", "a"}), IsOk());
  EXPECT_FALSE(options_.json);
  ASSERT_THAT(Parse({"--json", "--nojson", "a"}), IsOk());
  EXPECT_FALSE(options_.json);
  EXPECT_THAT(Parse({"--json=maybe", "a"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("true or false")));
}

TEST_F(FlagSetTest, ListsRepeatAndSplitAtCommas) {
  // --node is not --no-de: a flag's own name comes before a negation.
  ASSERT_THAT(Parse({"--node", "a", "--node=b,c", "spec"}), IsOk());
  EXPECT_THAT(options_.nodes, ElementsAre("a", "b", "c"));
}

TEST_F(FlagSetTest, EverythingAfterTheDoubleDashIsAnOperand) {
  ASSERT_THAT(Parse({"spec", "--", "ls", "--json"}), IsOk());
  EXPECT_FALSE(options_.json);
  EXPECT_THAT(operands_, ElementsAre("spec", "ls", "--json"));
}

TEST_F(FlagSetTest, SaysWhatIsWrong) {
  EXPECT_THAT(Parse({"--parallelizm=3", "a"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown flag --parallelizm; did you mean `--parallelism`?")));
  EXPECT_THAT(Parse({"--parallelism=many", "a"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a whole number")));
  EXPECT_THAT(Parse({"--color=blue", "a"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("one of auto, always, never")));
  EXPECT_THAT(Parse({"--step-timeout=soon", "a"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("a duration")));
  EXPECT_THAT(Parse({"a", "--out"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--out needs a value")));
  EXPECT_THAT(Parse({}), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("expected one to three operands")));
  EXPECT_THAT(Parse({"a", "b", "c", "d"}), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(FlagSetTest, ABareDurationIsSeconds) {
  ASSERT_THAT(Parse({"--step-timeout", "5", "a"}), IsOk());
  EXPECT_EQ(options_.timeout, absl::Seconds(5));
}

TEST_F(FlagSetTest, DescribesItsFlagsWithDefaultsAndGroups) {
  CommandDoc doc;
  CommandLine line;
  line.name = "plan";
  line.summary = "show the plan";
  line.describe = &doc;
  std::vector<std::string> operands;
  EXPECT_EQ(flags_.Parse(line, &operands), 0);
  EXPECT_EQ(doc.name, "plan");
  EXPECT_EQ(doc.summary, "show the plan");
  ASSERT_EQ(doc.flags.size(), 7u);
  EXPECT_EQ(doc.flags[1].name, "accept-new-host-keys");
  EXPECT_EQ(doc.flags[3].default_text, "auto");
  EXPECT_EQ(doc.flags[4].default_text, "10");
  EXPECT_EQ(doc.flags[5].default_text, "10m");
  EXPECT_TRUE(doc.flags[6].repeatable);
  EXPECT_EQ(doc.flags[0].group, "Options");
}

TEST_F(FlagSetTest, ParseReturnsBadInputForAWrongCommandLine) {
  CommandLine line;
  line.name = "plan";
  line.args = {"--no-such-flag", "a.toml"};
  std::vector<std::string> operands;
  EXPECT_EQ(flags_.Parse(line, &operands), 2);
  line.args = {"a.toml"};
  EXPECT_EQ(flags_.Parse(line, &operands), std::nullopt);
  EXPECT_THAT(operands, ElementsAre("a.toml"));
}

}  // namespace
}  // namespace fleetplan
