// A transport defined here, outside tools/ and plugins/, reads its own spec
// tables, and plans and applies through the plan and apply libraries.

#include "tests/fake_transport/fake_transport.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/apply/executor.h"
#include "tools/apply/progress.h"
#include "tools/plan/compile.h"
#include "tools/plan/render.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/spec/spec_parser.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kPath[] = "/specs/fake.toml";

std::string Quoted(const std::string& text) { return absl::StrCat("\"", text, "\""); }

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<ClusterSpec> spec = ParseSpec(text, kPath);
  EXPECT_FALSE(spec.ok()) << "parsed without error:\n" << text;
  return spec.ok() ? "" : std::string(spec.status().message());
}

TEST(FakeTransportTest, ItsTableIsCheckedWhereItIsWritten) {
  EXPECT_EQ(ErrorOf("[[nodes]]\naddress = \"a\"\nworkdir = \"/w\"\ntransport = \"fake\"\n"
                    "fake = \"g\"\n[fake.g]\nlabl = \"x\"\n[job]\nprogram = \"x\"\n"),
            "/specs/fake.toml:7:1: error: fake.g.labl: unknown key (expected one of: label, "
            "env); did you mean `label`?\n  labl = \"x\"\n  ^\n"
            "/specs/fake.toml:6:1: error: fake.g.label: missing: every [fake.<group>] needs a "
            "label\n  [fake.g]\n  ^");
}

TEST(FakeTransportTest, NodesPickItsGroupsByName) {
  EXPECT_EQ(ErrorOf("[[nodes]]\naddress = \"a\"\nworkdir = \"/w\"\nfake = \"g2\"\n"
                    "[fake.g1]\nlabel = \"x\"\n[job]\nprogram = \"x\"\n"),
            "/specs/fake.toml:4:8: error: nodes[0].fake: no [fake.g2] group is defined "
            "(defined: g1); did you mean `g1`?\n  fake = \"g2\"\n         ^");
}

TEST(FakeTransportTest, AnUnknownTableSuggestsItsName) {
  std::string error = ErrorOf("[[nodes]]\naddress = \"a\"\nworkdir = \"/w\"\n"
                              "[fak.g]\nlabel = \"x\"\n[job]\nprogram = \"x\"\n");
  EXPECT_THAT(error, HasSubstr("error: fak: unknown key (expected one of: "));
  EXPECT_THAT(error, HasSubstr("); did you mean `fake`?"));
}

TEST(FakeTransportTest, PlansAndApplies) {
  std::string dir = MakeTempDir();
  for (const char* node : {"a", "b"}) {
    ASSERT_THAT(WriteFileAtomic(absl::StrCat(dir, "/work-", node, "/rank.sh"),
                                "#!/bin/sh\nenv > \"$FP_OUT/rank-$RANK.env\"\n", 0755),
                IsOk());
  }
  ASSERT_THAT(MakeDirs(dir + "/out"), IsOk());
  std::string path = dir + "/fake.toml";
  ASSERT_THAT(WriteFileAtomic(
                  path,
                  absl::StrCat("[defaults]\ntransport = \"fake\"\nfake = \"g1\"\n"
                               "[[nodes]]\nname = \"a\"\naddress = \"127.0.0.1\"\nchief = true\n"
                               "workdir = ", Quoted(dir + "/work-a"), "\n"
                               "[[nodes]]\nname = \"b\"\naddress = \"127.0.0.2\"\nworkdir = ",
                               Quoted(dir + "/work-b"), "\n"
                               "[fake.g1]\nlabel = \"first\"\nenv = { FAKE_GROUP = \"from-g1\" }\n"
                               "[env]\nFP_OUT = ", Quoted(dir + "/out"), "\n"
                               "[network]\nmaster_port = 29571\n"
                               "[job]\nprogram = \"./rank.sh\"\n"),
                  0644),
              IsOk());

  FP_ASSERT_OK_AND_ASSIGN(ClusterSpec spec, LoadSpecFile(path));
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec, CompileInputs()));
  EXPECT_THAT(RenderPlanText(plan, /*color=*/false), HasSubstr("launch"));

  ApplyOptions options;
  options.agent_path =
      absl::StrCat(getenv("TEST_SRCDIR"), "/fleetplan/tools/agent/fleetplan-agent");
  std::unique_ptr<ProgressReporter> reporter =
      MakeReporter(ReportStyle::kPlain, stdout, /*color=*/false, {"a", "b"});
  Executor executor(spec, plan, Manifest(), options, *reporter, TransportConnections());
  ApplyResult result = executor.Run();
  ASSERT_EQ(result.exit_code, 0) << result.message;
  EXPECT_THAT(FakeConnectedLabels(), ElementsAre("first", "first"));
  for (int rank : {0, 1}) {
    absl::StatusOr<std::string> env =
        ReadFileToString(absl::StrCat(dir, "/out/rank-", rank, ".env"));
    ASSERT_THAT(env, IsOk());
    EXPECT_THAT(*env, HasSubstr("\nFAKE_GROUP=from-g1\n"));
  }
}

}  // namespace
}  // namespace fleetplan
