#include "tools/cli/help_text.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

CommandDoc Doc() {
  CommandDoc doc;
  doc.name = "apply";
  doc.summary = "do it";
  doc.usage = {"[options] SPEC.toml"};
  doc.description = "First paragraph.\n\n  a list line\n  another";
  FlagDoc json;
  json.name = "json";
  json.help = "Print JSON.";
  json.group = "Output";
  FlagDoc keys;
  keys.name = "accept-new-host-keys";
  keys.help = "ssh: add unknown host keys.";
  keys.group = "Connecting";
  FlagDoc parallelism;
  parallelism.name = "parallelism";
  parallelism.value_name = "N";
  parallelism.kind = ValueKind::kNumber;
  parallelism.help = "At most N at once.";
  parallelism.default_text = "10";
  parallelism.group = "Output";
  doc.flags = {json, keys, parallelism};
  doc.examples = {{"fleetplan apply cluster.toml", "start training"}};
  doc.exit_codes = {kExitOk, kExitLocked};
  doc.exit_note = "else the rank's status";
  return doc;
}

TEST(HelpTextTest, ReadsAsTheUserTypesIt) {
  std::string text = RenderHelpText(Doc());
  EXPECT_THAT(text, HasSubstr("fleetplan apply - do it\n"));
  EXPECT_THAT(text, HasSubstr("Usage:\n  fleetplan apply [options] SPEC.toml\n"));
  EXPECT_THAT(text, HasSubstr("\n  a list line\n  another\n"));
  // Grouped in the order the groups first appear, dashes as typed.
  EXPECT_THAT(text, HasSubstr("Output:\n  --json"));
  EXPECT_THAT(text, HasSubstr("  --parallelism=N           At most N at once. (default: 10)"));
  EXPECT_THAT(text, HasSubstr("Connecting:\n  --accept-new-host-keys"));
  EXPECT_LT(text.find("Output:"), text.find("Connecting:"));
  EXPECT_THAT(text, HasSubstr("Examples:\n  fleetplan apply cluster.toml\n      start training"));
  EXPECT_THAT(text, HasSubstr("Exit codes:\n  0    success\n  73   another apply"));
  EXPECT_THAT(text, HasSubstr("  else the rank's status"));
  EXPECT_THAT(text, Not(HasSubstr("_")));
  for (size_t start = 0, end; start < text.size(); start = end + 1) {
    end = text.find('\n', start);
    EXPECT_LE(end - start, 80u) << text.substr(start, end - start);
  }
}

TEST(HelpTextTest, TheManPageHasTheSameParts) {
  std::string page = RenderManPage(Doc(), "1.2.3");
  EXPECT_THAT(page, HasSubstr(".TH FLEETPLAN\\-APPLY 1 \"\" \"fleetplan 1.2.3\""));
  EXPECT_THAT(page, HasSubstr(".SH NAME\nfleetplan\\-apply \\- do it\n"));
  EXPECT_THAT(page, HasSubstr(".SS Connecting\n.TP\n\\fB\\-\\-accept\\-new\\-host\\-keys\\fR\n"));
  EXPECT_THAT(page, HasSubstr("\\fB\\-\\-parallelism\\fR=\\fIN\\fR\n"));
  EXPECT_THAT(page, HasSubstr(".SH EXIT STATUS\n.TP\n.B 0\nsuccess\n"));
  EXPECT_THAT(page, HasSubstr(".nf\na list line\nanother\n.fi\n"));
}

TEST(HelpTextTest, TheOverviewListsTheCommandsAndEveryExitCode) {
  std::string text = RenderOverviewText({{"plan", "show it"}, {"apply", "do it"}});
  EXPECT_THAT(text, HasSubstr("  plan   show it\n  apply  do it\n"));
  for (const ExitCodeMeaning& entry : kExitCodeTable) {
    EXPECT_THAT(text, HasSubstr(entry.meaning));
  }
  std::string page = RenderOverviewManPage({{"plan", "show it"}}, "1");
  EXPECT_THAT(page, HasSubstr(".BR fleetplan\\-plan (1)"));
}

}  // namespace
}  // namespace fleetplan
