#include "tools/apply/preflight_report.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/protocol/check_line.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSystemTorch[] =
    "fleetplan-fact libtorch 3047573620 119940888 "
    "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0\n";

const CheckResult& Result(const PreflightReport& report, const std::string& node,
                          absl::string_view check) {
  for (const NodeChecks* checks : report.Reported()) {
    if (checks->node != node) continue;
    if (const CheckResult* result = checks->Find(check)) return *result;
  }
  static const CheckResult kNone{"none", CheckStatus::kSkip, "missing"};
  ADD_FAILURE() << "no " << check << " on " << node;
  return kNone;
}

TEST(PreflightReportTest, ADifferentPythonOnOneNodeFailsNamingBoth) {
  PreflightReport report({"a", "b", "c"});
  for (const char* node : {"a", "c"}) {
    report.Add(node, ParseCheckOutput("fleetplan-fact interpreter 3.11.2 /usr/bin/python3\n"));
  }
  report.Add("b", ParseCheckOutput("fleetplan-fact interpreter 3.9.0 /opt/odd/python3\n"));
  report.Conclude();
  ASSERT_TRUE(report.failed());
  EXPECT_EQ(Result(report, "b", kCheckInterpreter).message,
            "/opt/odd/python3 (Python 3.9.0); the other nodes (a, c) run /usr/bin/python3 "
            "(Python 3.11.2); expected the same Python version on every node; fix: install "
            "that Python on b, or activate an environment there that has it ([defaults] "
            "python)");
  EXPECT_THAT(Result(report, "a", kCheckInterpreter).message,
              HasSubstr("/usr/bin/python3 (Python 3.11.2), the same on 2 of 3 nodes"));
}

TEST(PreflightReportTest, ADifferentLibtorchOnOneNodeFailsNamingBoth) {
  PreflightReport report({"a", "b", "c"});
  report.Add("a", ParseCheckOutput(kSystemTorch));
  report.Add("b", ParseCheckOutput(
                      "fleetplan-fact libtorch 11 22 /opt/alt lib/libtorch_cpu.so.1.13\n"));
  report.Add("c", ParseCheckOutput(kSystemTorch));
  report.Conclude();
  ASSERT_TRUE(report.failed());
  const CheckResult& odd = Result(report, "b", kCheckLibtorch);
  EXPECT_EQ(odd.status, CheckStatus::kFail);
  EXPECT_EQ(odd.message,
            "/opt/alt lib/libtorch_cpu.so.1.13 (LibTorch 1.13, xxh3 11, 22 bytes); the "
            "other nodes (a, c) load /usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0 "
            "(LibTorch 1.13.0, xxh3 3047573620, 119940888 bytes); expected the same "
            "LibTorch on every node; fix: install that LibTorch on b too, or point its "
            "LD_LIBRARY_PATH at it");
  EXPECT_EQ(Result(report, "a", kCheckLibtorch).status, CheckStatus::kOk);
  EXPECT_THAT(Result(report, "c", kCheckLibtorch).message,
              HasSubstr("the same on 2 of 3 nodes"));
  EXPECT_THAT(report.FailureMessage(),
              HasSubstr("preflight found 1 problem:\n  node 'b', check libtorch: "));
}

TEST(PreflightReportTest, OnATieTheFirstNodeIsTheReference) {
  PreflightReport report({"chief", "worker"});
  report.Add("chief", ParseCheckOutput(kSystemTorch));
  report.Add("worker", ParseCheckOutput("fleetplan-fact libtorch 1 2 /x/libtorch_cpu.so\n"));
  report.Conclude();
  EXPECT_EQ(Result(report, "chief", kCheckLibtorch).status, CheckStatus::kOk);
  const CheckResult& worker = Result(report, "worker", kCheckLibtorch);
  EXPECT_EQ(worker.status, CheckStatus::kFail);
  EXPECT_THAT(worker.message, HasSubstr("/x/libtorch_cpu.so (xxh3 1, 2 bytes)"));
}

TEST(PreflightReportTest, TheSameLibtorchEverywherePasses) {
  PreflightReport report({"a", "b"});
  report.Add("a", ParseCheckOutput(kSystemTorch));
  report.Add("b", ParseCheckOutput(kSystemTorch));
  report.Conclude();
  EXPECT_FALSE(report.failed());
}

TEST(PreflightReportTest, ConnectCountsOnlyWhereTheChiefListened) {
  PreflightReport busy({"a", "b"});
  busy.Add("a", ParseCheckOutput("fleetplan-check port fail port 1: in use\n"
                                 "fleetplan-check connect ok connected to a:1\n"));
  busy.Add("b", ParseCheckOutput("fleetplan-check connect fail cannot connect\n"));
  busy.Conclude();
  EXPECT_EQ(Result(busy, "a", kCheckConnect).status, CheckStatus::kSkip);
  EXPECT_EQ(Result(busy, "b", kCheckConnect).status, CheckStatus::kSkip);
  EXPECT_THAT(busy.FailureMessage(), HasSubstr("preflight found 1 problem:\n"
                                               "  node 'a', check port: port 1: in use"));

  PreflightReport listened({"a", "b"});
  listened.Add("a", ParseCheckOutput("fleetplan-check port ok port 1: free\n"
                                     "fleetplan-fact listening 1\n"));
  listened.Add("b", ParseCheckOutput("fleetplan-check connect fail cannot connect\n"));
  listened.Conclude();
  EXPECT_EQ(Result(listened, "b", kCheckConnect).status, CheckStatus::kFail);
}

TEST(PreflightReportTest, ALaterResultOfTheSameCheckReplacesTheEarlier) {
  PreflightReport report({"a"});
  report.Add("a", ParseCheckOutput("fleetplan-check workdir ok before the sync\n"));
  report.Add("a", ParseCheckOutput("fleetplan-check workdir fail after it\n"
                                   "fleetplan-check python ok venv\n"));
  ASSERT_EQ(report.Reported().size(), 1u);
  ASSERT_EQ(report.Reported()[0]->checks.size(), 2u);
  EXPECT_EQ(Result(report, "a", kCheckWorkdir).message, "after it");
}

TEST(PreflightReportTest, ANodeOfSkipsAloneRanNoCheck) {
  PreflightReport report({"a", "b", "silent"});
  report.Add("a", ParseCheckOutput("fleetplan-check agent skip not there yet\n"));
  report.Add("b", ParseCheckOutput("fleetplan-check program skip not synced yet\n"
                                   "fleetplan-check python ok 3.11\n"));
  ASSERT_EQ(report.NoneRan().size(), 1u);
  EXPECT_EQ(report.NoneRan()[0]->node, "a");
}

TEST(PreflightReportTest, TableHasARowPerNodeAndNotesUnderIt) {
  PreflightReport report({"head", "worker-1", "silent"});
  report.Add("head", ParseCheckOutput(
                         "fleetplan-check workdir ok /w\n"
                         "fleetplan-check gpus skip no nvidia-smi on the ranks' PATH\n"
                         "fleetplan-check nccl ok eno1 holds 10.0.0.1\n"
                         "fleetplan-fact nccl_socket_ifname eno1\n"));
  report.Add("worker-1", ParseCheckOutput("fleetplan-check workdir fail /w: read-only\n"
                                          "fleetplan-check nccl ok eth0 holds 10.0.0.2\n"
                                          "fleetplan-fact nccl_socket_ifname eth0\n"));
  EXPECT_EQ(RenderPreflightTable(report, false),
            "preflight checks\n"
            "  node      workdir  gpus  nccl\n"
            "  head      ok       skip  eno1\n"
            "  worker-1  FAIL     -     eth0\n"
            "  FAIL worker-1 workdir: /w: read-only\n"
            "  skip head gpus: no nvidia-smi on the ranks' PATH\n");
  std::string colored = RenderPreflightTable(report, true);
  EXPECT_THAT(colored, HasSubstr("\033[31mFAIL   \033[0m"));
  EXPECT_THAT(colored, HasSubstr("\033[32meno1\033[0m"));
  EXPECT_THAT(RenderPreflightTable(report, false), Not(HasSubstr("silent")));
}

}  // namespace
}  // namespace fleetplan
