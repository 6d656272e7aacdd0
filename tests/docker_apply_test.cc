// apply end to end on Docker: node containers created from the test bed's
// image (tests/testbed), the launch agent, and the real trainer training
// across three containers with Gloo; a re-apply that changes nothing;
// --destroy that leaves nothing behind; and the errors a user meets.
//
// The job is the trainer binary this test depends on, synced as a path
// under workdir: the build phase's nested `bazel build` cannot run inside
// `bazel test`, whose server is busy running this test.

#include <unistd.h>

#include <signal.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/apply_harness.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/process/subprocess.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr int kNodes = 3;
constexpr char kWorkdir[] = "/work/fleetplan";
// Quotes, command substitution, backquotes, a backslash, a newline, `$`.
const char kHostile[] = "it's $(touch /tmp/fp-pwned) `id` \"q\" \\n\\\n$HOME;|&";

class DockerApplyTest : public DockerTestbedTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ready());
    dir_ = MakeTempDir();
    prefix_ = absl::StrCat("fp-e2e-", getpid(), "-", ++specs_);
    ASSERT_THAT(CopyFileAtomic(Runfile("tests/testdata/rank.sh"), dir_ + "/src/rank.sh", 0755),
                IsOk());
  }

  void TearDown() override {
    if (!spec_.empty()) RunTool({"tools/fleetplan-apply", "--destroy", spec_});
    EXPECT_THAT(Containers(), IsEmpty());
  }

  std::string Node(int i) const { return absl::StrCat(prefix_, "-", i); }

  // A spec with kNodes containers running `program` with `args`.
  std::string WriteSpec(const std::string& program, const std::string& args,
                        const std::string& image) {
    std::string nodes;
    for (int i = 0; i < kNodes; ++i) {
      absl::StrAppend(&nodes, "[[nodes]]\naddress = \"", Node(i), "\"\n",
                      i == 0 ? "chief = true\n" : "");
    }
    std::string spec = absl::StrCat(
        "name = \"", prefix_, "\"\n[defaults]\ntransport = \"docker\"\nworkdir = \"", kWorkdir,
        "\"\n", nodes, "[docker]\nimage = ", TomlString(image), "\nnetwork = \"", prefix_,
        "-net\"\ncreate = true\n[sync]\nsource = \"src\"\n[env]\nHOSTILE = ",
        TomlString(kHostile), "\nFP_OUT = \"/tmp\"\nFAIL_RANK = \"none-fails\"\n",
        "[job]\nprogram = \"", program, "\"\nargs = [", args, "]\n");
    spec_ = dir_ + "/cluster.toml";
    EXPECT_THAT(WriteFileAtomic(spec_, spec, 0644), IsOk());
    return spec_;
  }

  ToolResult Apply(std::vector<std::string> args, absl::Duration timeout = absl::Seconds(120),
                   const std::vector<std::pair<std::string, std::string>>& env = {}) {
    args.insert(args.begin(), "tools/fleetplan-apply");
    return RunTool(args, timeout, env);
  }

  // Containers and networks this test's specs created that still exist.
  std::vector<std::string> Containers() const {
    std::vector<std::string> left;
    for (const char* list : {"ps -a --format '{{.Names}}'", "network ls --format '{{.Name}}'"}) {
      absl::StatusOr<std::string> names =
          RunScript(absl::StrCat("docker ", list, " --filter name=", prefix_));
      EXPECT_THAT(names, IsOk());
      if (!names.ok()) continue;
      for (absl::string_view name : absl::StrSplit(*names, '\n', absl::SkipEmpty())) {
        left.emplace_back(name);
      }
    }
    return left;
  }

  // `command` run by sh in container `node`.
  absl::StatusOr<std::string> Exec(int node, const std::string& command) const {
    return ContainerExec(Node(node), command);
  }

  static int specs_;
  std::string dir_;
  std::string prefix_;
  std::string spec_;
};

int DockerApplyTest::specs_ = 0;

TEST_F(DockerApplyTest, TrainsAcrossThreeContainersThenReapplyChangesNothing) {
  ASSERT_THAT(CopyFileAtomic(Runfile("trainer/train"), dir_ + "/src/train", 0755), IsOk());
  std::string spec = WriteSpec(
      "./train", "\"--backend=gloo\", \"--dataset=fashion-mnist\", \"--epochs=1\"",
      image());
  // Before the containers exist, the refresh reads them as holding nothing
  // and creates none.
  ToolResult refresh = RunTool({"tools/fleetplan-plan", "--refresh", spec});
  ASSERT_EQ(refresh.status, 0) << refresh.output;
  EXPECT_THAT(refresh.output, HasSubstr("(sends all "));
  EXPECT_THAT(refresh.output, HasSubstr(" to add, 0 to change, 0 unchanged.\n"));
  ToolResult check = RunTool({"tools/fleetplan-plan", "--check", spec});
  ASSERT_EQ(check.status, 0) << check.output;
  EXPECT_THAT(check.output, HasSubstr(absl::StrCat("  skip ", Node(1), " reach: node ", Node(1),
                                                   ": no container named ", Node(1),
                                                   " yet (apply creates it)")));
  EXPECT_THAT(check.output, HasSubstr(absl::StrCat("no node checked: ", kNodes,
                                                   " not created yet (apply creates them)")));
  EXPECT_THAT(Containers(), IsEmpty());
  ToolResult apply = PlanApplyAndExpectTrained(spec, kNodes, Node(0), 0.86);
  ASSERT_EQ(apply.status, 0);
  // Every rank has its log with its node's agent.
  for (int i = 0; i < kNodes; ++i) {
    EXPECT_THAT(Exec(i, absl::StrCat("test -f ", kWorkdir, "/.fleetplan/nodes/", Node(i),
                                     "/logs/latest/rank-", i, ".log")),
                IsOk());
  }

  ToolResult again = Apply({"--json", spec});
  ASSERT_EQ(again.status, 0) << again.output;
  StepEvents steps = FinishedSteps(again.output);
  EXPECT_GE(steps.finished, 3 * kNodes) << again.output;
  EXPECT_THAT(steps.changed, IsEmpty()) << again.output;

  ToolResult destroy = Apply({"--destroy", spec});
  EXPECT_EQ(destroy.status, 0) << destroy.output;
  EXPECT_THAT(Containers(), IsEmpty());
  spec_.clear();  // destroyed already
}

TEST_F(DockerApplyTest, HostileEnvArrivesAndAContainerThatDiesIsNamed) {
  // FAIL_RANK names no rank: every rank records its env and keeps running.
  std::string spec = WriteSpec("./rank.sh", "", image());
  ToolResult apply;
  std::thread runner([&] { apply = Apply({spec}); });
  absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (absl::Now() < deadline && !Exec(1, "test -f /tmp/hostile-1").ok()) {
    absl::SleepFor(absl::Milliseconds(200));
  }
  absl::StatusOr<std::string> hostile = Exec(0, "cat /tmp/hostile-0; echo .");
  EXPECT_THAT(RunScript(absl::StrCat("docker kill ", Node(1))), IsOk());
  runner.join();

  // Its agent died with the container: the coordinator lost it at once
  // and stopped the job, naming the node.
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr(absl::StrCat("apply failed: node '", Node(1),
                                                   "' failed: its agent's connection closed")));
  ASSERT_THAT(hostile, IsOk());
  // RunScript trims the output, hence the "." after it.
  EXPECT_EQ(*hostile, absl::StrCat(kHostile, "."));
  // The ranks of the surviving containers were stopped too.
  for (int i : {0, 2}) {
    EXPECT_THAT(ContainerProcessesMentioning(Node(i), "rank.sh"), IsEmpty()) << Node(i);
  }
}

// On the docker transport too, the job outlives apply: a detached job and
// a killed apply leave it running, status and logs read it, stop ends it
// with nothing left in any container.
TEST_F(DockerApplyTest, TheJobOutlivesApplyAndStopLeavesNothing) {
  std::string spec = WriteSpec("./rank.sh", "", image());
  ToolResult detached = Apply({"--detach", spec});
  ASSERT_EQ(detached.status, 0) << detached.output;
  EXPECT_THAT(detached.output, HasSubstr(" started on 3 nodes; it runs without apply"));
  ToolResult status = RunTool({"tools/fleetplan-status", "--json", spec});
  ASSERT_EQ(status.status, 0) << status.output;
  nlohmann::json json = nlohmann::json::parse(status.output, nullptr, false);
  EXPECT_EQ(json["state"], "running") << status.output;
  for (int i = 0; i < kNodes; ++i) {
    EXPECT_THAT(ContainerProcessesMentioning(Node(i), "rank.sh", absl::ZeroDuration()),
                Not(IsEmpty()))
        << Node(i);
  }

  // apply attached to the running job, then killed without a word.
  SubprocessOptions run;
  run.argv = {Runfile("tools/fleetplan-apply"), "--replace", spec};
  run.env = {{"RUNFILES_DIR", getenv("TEST_SRCDIR")}};
  FP_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Subprocess> apply, Subprocess::Start(run));
  std::string output;
  Subprocess* all[] = {apply.get()};
  absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (!absl::StrContains(output, "launch: changed") && absl::Now() < deadline &&
         !apply->TryWait().has_value()) {
    PumpOutput(all, {}, absl::Milliseconds(50),
               [&](size_t, absl::string_view chunk) { absl::StrAppend(&output, chunk); });
  }
  ASSERT_THAT(output, HasSubstr("stopping it (--replace)"));
  apply->SignalGroup(SIGKILL);
  while (!apply->TryWait().has_value()) {
    PumpOutput(all, {}, absl::Milliseconds(50), [](size_t, absl::string_view) {});
  }
  absl::SleepFor(absl::Seconds(2));
  json = nlohmann::json::parse(RunTool({"tools/fleetplan-status", "--json", spec}).output,
                               nullptr, false);
  EXPECT_EQ(json["state"], "running") << json;
  EXPECT_EQ(json["nodes"][1]["ranks_alive"], 1) << json;

  ToolResult stop = RunTool({"tools/fleetplan-stop", spec});
  EXPECT_EQ(stop.status, 0) << stop.output;
  for (int i = 0; i < kNodes; ++i) {
    EXPECT_THAT(ContainerProcessesMentioningAny(Node(i), {"rank.sh", "fleetplan-agent"}), IsEmpty())
        << Node(i);
  }
  json = nlohmann::json::parse(RunTool({"tools/fleetplan-status", "--json", spec}).output,
                               nullptr, false);
  EXPECT_EQ(json["state"], "stopped") << json;
}

TEST_F(DockerApplyTest, MissingImageIsNamedAndNothingIsCreated) {
  std::string spec = WriteSpec("./rank.sh", "", "fleetplan-no-such-image:latest");
  ToolResult apply = Apply({spec});
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr("fleetplan-no-such-image:latest"));
  for (const std::string& left : Containers()) {
    EXPECT_THAT(left, HasSubstr("-net")) << "only the network may exist before destroy";
  }
}

TEST_F(DockerApplyTest, NoDaemonSaysHowToStartOne) {
  std::string spec = WriteSpec("./rank.sh", "", image());
  ToolResult apply =
      Apply({spec}, absl::Seconds(60), {{"DOCKER_HOST", absl::StrCat("unix:///tmp/", prefix_, ".sock")}});
  EXPECT_EQ(apply.status, 1) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr("dockerd"));
  spec_.clear();  // nothing was created
}

}  // namespace
}  // namespace fleetplan
