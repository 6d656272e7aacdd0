// apply end to end on a real Slurm cluster: slurmctld and three slurmd in
// containers (tests/testbed/slurm_cluster.sh), this machine the login node.
// The plan shows placeholder nodes until apply obtains the allocation; the
// trainer trains across it; a re-apply changes nothing; a failing rank
// stops every rank and the allocation is released; --destroy leaves squeue
// empty; bad [slurm] settings and an unknown partition are named; a
// detached job's agents live in one job step that outlives apply, until
// stop, or until one of them dies (Slurm then ends the step everywhere).
//
// The job is the trainer binary this test depends on, synced as a path
// under workdir (no nested bazel build inside bazel test).
//
// //tests:slurm_cgroup_apply_test runs the cases about the launch agents'
// life on a test bed whose slurmd track steps with proctrack/cgroup
// (FLEETPLAN_SLURM_PROCTRACK=cgroup, as production clusters do), where a
// process that leaves a job step dies with it.

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/apply_harness.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/util/path_policy.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr int kNodes = 3;

class SlurmApplyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::string> host = RunScript("tests/testbed/dockerd.sh ensure");
    ASSERT_THAT(host, IsOk());
    setenv("DOCKER_HOST", host->c_str(), 1);
    prefix_ = new std::string(absl::StrCat("fp-slurm-", getpid()));
    absl::StatusOr<std::string> conf = RunScript(
        absl::StrCat("tests/testbed/slurm_cluster.sh up ", kNodes, " ", *prefix_));
    ASSERT_THAT(conf, IsOk());
    // The binaries this test runs reach the cluster through it.
    setenv("SLURM_CONF", conf->c_str(), 1);
    ready_ = true;
  }

  static void TearDownTestSuite() {
    if (prefix_ != nullptr) {
      EXPECT_THAT(RunScript(absl::StrCat("tests/testbed/slurm_cluster.sh down ", *prefix_)),
                  IsOk());
    }
  }

  void SetUp() override {
    ASSERT_TRUE(ready_) << "the Slurm test bed did not start";
    dir_ = MakeTempDir();
    ASSERT_THAT(CopyFileAtomic(Runfile("tests/testdata/rank.sh"), dir_ + "/src/rank.sh", 0755),
                IsOk());
    for (int i = 0; i < kNodes; ++i) {
      ASSERT_THAT(ContainerExec(Host(i), "rm -rf /tmp/rank-*.env /tmp/hostile-*"), IsOk());
    }
  }

  // Whatever a failed test left, the next one starts with no job queued.
  void TearDown() override {
    if (!last_spec_.empty()) RunTool({"tools/fleetplan-apply", "--destroy", last_spec_});
    EXPECT_THAT(Squeue(), IsEmpty());
  }

  static std::string Host(int i) { return absl::StrCat(*prefix_, "-", i); }

  // squeue's lines: every job of the cluster.
  static std::string Squeue() {
    absl::StatusOr<std::string> queue = RunScript("squeue --noheader --format='%i %j %T %N'");
    return queue.ok() ? *queue : std::string(queue.status().message());
  }

  // A spec on the cluster: `slurm` holds the [slurm] table's lines, `job`
  // the [job] table's; ranks run rank.sh unless `job` says otherwise.
  std::string WriteSpec(const std::string& name, const std::string& slurm,
                        const std::string& job = "program = \"./rank.sh\"\n",
                        const std::string& fail_rank = "none") {
    std::string spec = absl::StrCat(
        "name = \"", name, "\"\n[defaults]\ntransport = \"slurm\"\nworkdir = \"/shared/", name,
        "\"\n[slurm]\n", slurm, "[sync]\nsource = \"src\"\n[env]\nFP_OUT = \"/tmp\"\n",
        "FAIL_RANK = \"", fail_rank, "\"\n[job]\n", job);
    std::string path = absl::StrCat(dir_, "/", name, ".toml");
    EXPECT_THAT(WriteFileAtomic(path, spec, 0644), IsOk());
    last_spec_ = path;
    return path;
  }

  // Expects no rank and no agent left on any node.
  void ExpectNothingRunning() const {
    for (int i = 0; i < kNodes; ++i) {
      EXPECT_THAT(ContainerProcessesMentioningAny(Host(i), {"rank.sh", "fleetplan-agent", "train"}),
                  IsEmpty())
          << Host(i);
    }
  }

  static std::string* prefix_;
  static bool ready_;
  std::string dir_;
  std::string last_spec_;
};

std::string* SlurmApplyTest::prefix_ = nullptr;
bool SlurmApplyTest::ready_ = false;

TEST_F(SlurmApplyTest, PlansPlaceholdersTrainsAcrossTheAllocationAndReappliesNothing) {
  ASSERT_THAT(CopyFileAtomic(Runfile("trainer/train"), dir_ + "/src/train", 0755), IsOk());
  std::string spec = WriteSpec(
      "slurm-train", "partition = \"debug\"\nnodes = 3\ntime = \"00:20:00\"\n",
      "program = \"./train\"\nargs = [\"--backend=gloo\", \"--dataset=fashion-mnist\", "
      "\"--epochs=1\"]\n");

  // Before apply there is no allocation: the plan names placeholders.
  ToolResult plan = RunTool({"tools/fleetplan-plan", spec});
  ASSERT_EQ(plan.status, 0) << plan.output;
  EXPECT_THAT(plan.output, HasSubstr("slurm-2"));
  EXPECT_THAT(Squeue(), IsEmpty());

  PlanApplyAndExpectTrained(spec, kNodes, Host(0), 0.5);
  EXPECT_THAT(Squeue(), HasSubstr("fleetplan-slurm-train RUNNING"));

  // The same spec again: every step recorded, nothing runs again.
  ToolResult again = RunTool({"tools/fleetplan-apply", "--json", spec}, absl::Minutes(2));
  ASSERT_EQ(again.status, 0) << again.output;
  StepEvents steps = FinishedSteps(again.output);
  EXPECT_GT(steps.finished, 0) << again.output;
  EXPECT_THAT(steps.changed, IsEmpty()) << again.output;

  // The live allocation's hosts, not placeholders, once it exists.
  ToolResult refresh = RunTool({"tools/fleetplan-plan", "--refresh", spec});
  ASSERT_EQ(refresh.status, 0) << refresh.output;
  EXPECT_THAT(refresh.output, HasSubstr(Host(2)));
  EXPECT_THAT(refresh.output, Not(HasSubstr("slurm-2 ")));

  ToolResult destroy = RunTool({"tools/fleetplan-apply", "--destroy", spec});
  EXPECT_EQ(destroy.status, 0) << destroy.output;
  EXPECT_THAT(Squeue(), IsEmpty());
  ExpectNothingRunning();
}

TEST_F(SlurmApplyTest, AFailingRankStopsEveryRankAndReleasesTheAllocation) {
  std::string spec = WriteSpec("slurm-fail", "nodes = 3\n", "program = \"./rank.sh\"\n", "1");
  ToolResult apply = RunTool({"tools/fleetplan-apply", spec}, absl::Minutes(2));
  EXPECT_EQ(apply.status, 3) << apply.output;
  EXPECT_THAT(Squeue(), IsEmpty());
  ExpectNothingRunning();
}

TEST_F(SlurmApplyTest, NamedNodesAreAskedForByName) {
  std::string spec = WriteSpec("slurm-named", "partition = \"debug\"\n");
  // [[nodes]] instead of a count: two of the three hosts.
  std::string text = *ReadFileToString(spec);
  absl::StrAppend(&text, "[[nodes]]\naddress = \"", Host(2), "\"\nchief = true\n[[nodes]]\naddress = \"",
                  Host(1), "\"\n");
  ASSERT_THAT(WriteFileAtomic(spec, text, 0644), IsOk());
  ToolResult apply = RunTool({"tools/fleetplan-apply", spec}, absl::Minutes(2));
  ASSERT_EQ(apply.status, 0) << apply.output;
  EXPECT_THAT(ContainerExec(Host(2), "test -f /tmp/rank-0.env"), IsOk());
  EXPECT_THAT(ContainerExec(Host(1), "test -f /tmp/rank-1.env"), IsOk());
  EXPECT_THAT(Squeue(), HasSubstr(absl::StrCat(*prefix_, "-[1-2]")));
}

// /shared is one folder for every node and is synced once; a workdir on
// each node's own disk must reach every node.
TEST_F(SlurmApplyTest, AWorkdirOnEachNodesOwnDiskIsSyncedToEveryNode) {
  std::string spec = WriteSpec("slurm-own-disk", "nodes = 3\n");
  std::string text = *ReadFileToString(spec);
  text = absl::StrReplaceAll(text, {{"workdir = \"/shared/slurm-own-disk\"",
                                     "workdir = \"/var/tmp/slurm-own-disk\""}});
  ASSERT_THAT(WriteFileAtomic(spec, text, 0644), IsOk());
  ToolResult apply = RunTool({"tools/fleetplan-apply", spec}, absl::Minutes(2));
  ASSERT_EQ(apply.status, 0) << apply.output;
  for (int i = 0; i < kNodes; ++i) {
    EXPECT_THAT(ContainerExec(Host(i), "test -x /var/tmp/slurm-own-disk/rank.sh"), IsOk());
    EXPECT_THAT(ContainerExec(Host(i), absl::StrCat("test -f /tmp/rank-", i, ".env")), IsOk());
  }
}

// `plan -out` names placeholders (no allocation yet); apply of that plan
// obtains the allocation and runs it on the hosts.
TEST_F(SlurmApplyTest, ASavedPlanOfPlaceholdersApplies) {
  std::string spec = WriteSpec("slurm-saved", "nodes = 3\n");
  std::string saved = dir_ + "/plan.json";
  ToolResult plan = RunTool({"tools/fleetplan-plan", absl::StrCat("--out=", saved), spec});
  ASSERT_EQ(plan.status, 0) << plan.output;
  EXPECT_THAT(plan.output, HasSubstr("slurm-1"));
  ToolResult apply = RunTool({"tools/fleetplan-apply", saved}, absl::Minutes(2));
  EXPECT_EQ(apply.status, 0) << apply.output;
  EXPECT_THAT(ContainerExec(Host(1), "test -f /tmp/rank-1.env"), IsOk());

  // A changed spec still makes it stale, and nothing stays allocated.
  ASSERT_THAT(RunTool({"tools/fleetplan-apply", "--destroy", spec}).status, 0);
  std::string text = *ReadFileToString(spec);
  ASSERT_THAT(WriteFileAtomic(spec, text + "args = [\"x\"]\n", 0644), IsOk());
  ToolResult stale = RunTool({"tools/fleetplan-apply", saved}, absl::Minutes(2));
  EXPECT_EQ(stale.status, 2) << stale.output;
  EXPECT_THAT(stale.output, HasSubstr("the spec changed since the plan was saved"));
  EXPECT_THAT(Squeue(), IsEmpty());
}

TEST_F(SlurmApplyTest, BadSlurmSettingsAreNamedAtFileLineColumn) {
  std::string spec = WriteSpec("slurm-bad",
                               "partiton = \"debug\"\nnodes = 0\ntime = \"soon\"\n"
                               "gpus_per_node = \"2\"\nsbatch = [\"qos=high\"]\n");
  ToolResult plan = RunTool({"tools/fleetplan-plan", spec});
  EXPECT_EQ(plan.status, 2) << plan.output;
  EXPECT_THAT(plan.output, HasSubstr(absl::StrCat(spec, ":6:1")));   // partiton
  EXPECT_THAT(plan.output, HasSubstr("did you mean `partition`?"));
  EXPECT_THAT(plan.output, HasSubstr(absl::StrCat(spec, ":7:9")));   // nodes = 0
  EXPECT_THAT(plan.output, HasSubstr(absl::StrCat(spec, ":8:8")));   // time
  EXPECT_THAT(plan.output, HasSubstr(absl::StrCat(spec, ":9:17")));  // gpus_per_node
  EXPECT_THAT(plan.output, HasSubstr(absl::StrCat(spec, ":10:10"))); // sbatch
  EXPECT_THAT(Squeue(), IsEmpty());
}

TEST_F(SlurmApplyTest, AnUnknownPartitionIsNamedBeforeAnythingIsAllocated) {
  std::string spec = WriteSpec("slurm-nopart", "partition = \"gpu\"\nnodes = 3\n");
  ToolResult check = RunTool({"tools/fleetplan-plan", "--check", spec});
  EXPECT_NE(check.status, 0) << check.output;
  EXPECT_THAT(check.output, HasSubstr("partition \"gpu\" does not exist (partitions: debug)"));
  ToolResult apply = RunTool({"tools/fleetplan-apply", spec});
  EXPECT_NE(apply.status, 0) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr("partition \"gpu\" does not exist"));

  // More nodes than the partition has: named too.
  std::string big = WriteSpec("slurm-big", "nodes = 4\n");
  ToolResult too_many = RunTool({"tools/fleetplan-apply", big});
  EXPECT_NE(too_many.status, 0) << too_many.output;
  EXPECT_THAT(too_many.output, HasSubstr("partition \"debug\" has 3 nodes; the spec needs 4"));
  EXPECT_THAT(Squeue(), IsEmpty());
}

// apply run inside an allocation (SLURM_JOB_ID, as in a batch script or
// an salloc shell) uses it, and leaves it to its owner even when it fails.
TEST_F(SlurmApplyTest, ApplyInsideAnAllocationUsesItAndNeverCancelsIt) {
  ASSERT_THAT(RunScript("salloc --no-shell --quiet --job-name=outer --nodes=3"), IsOk());
  absl::StatusOr<std::string> job = RunScript("squeue --noheader --name=outer --format=%i");
  ASSERT_THAT(job, IsOk());
  const std::vector<std::pair<std::string, std::string>> inside = {{"SLURM_JOB_ID", *job}};

  std::string spec = WriteSpec("slurm-inside", "nodes = 3\n");
  ToolResult apply = RunTool({"tools/fleetplan-apply", spec}, absl::Minutes(2), inside);
  EXPECT_EQ(apply.status, 0) << apply.output;
  EXPECT_THAT(Squeue(), Not(HasSubstr("fleetplan-slurm-inside")));
  EXPECT_THAT(ContainerExec(Host(2), "test -f /tmp/rank-2.env"), IsOk());

  std::string failing = WriteSpec("slurm-inside-fails", "nodes = 3\n", "program = \"./rank.sh\"\n", "1");
  ToolResult failed = RunTool({"tools/fleetplan-apply", failing}, absl::Minutes(2), inside);
  EXPECT_EQ(failed.status, 3) << failed.output;
  EXPECT_THAT(Squeue(), HasSubstr(absl::StrCat(*job, " outer RUNNING")));
  ExpectNothingRunning();
  EXPECT_THAT(RunScript(absl::StrCat("scancel ", *job, "; while squeue --noheader | grep -q .; do "
                                     "sleep 0.1; done")),
              IsOk());
  last_spec_.clear();
}

// A detached job: its launch agents are one job step, started by the
// allocation's batch script. apply's own steps end with apply, the agents'
// step stays, every agent and rank is one of its processes (slurmstepd's
// own list; under proctrack/cgroup, in its cgroup), status sees the job,
// and stop ends it and releases the allocation.
TEST_F(SlurmApplyTest, ADetachedJobLivesInOneJobStepUntilStopEndsItAndTheAllocation) {
  std::string spec = WriteSpec("slurm-stop", "nodes = 3\ntime = \"unlimited\"\n",
                               "program = \"./rank.sh\"\n", /*fail_rank=*/"99");
  ToolResult apply = RunTool({"tools/fleetplan-apply", "--detach", spec}, absl::Minutes(2));
  ASSERT_EQ(apply.status, 0) << apply.output;
  EXPECT_THAT(Squeue(), HasSubstr("fleetplan-slurm-stop RUNNING"));
  // Shared workdir: one node sent the files, the others say so.
  EXPECT_THAT(apply.output, HasSubstr("0 B from this machine (shared workdir: "));
  absl::SleepFor(absl::Seconds(2));  // well after apply's end

  absl::StatusOr<std::string> steps = RunScript("squeue --noheader --steps --format='%i %j'");
  ASSERT_THAT(steps, IsOk());
  std::string agents_step;
  int step_count = 0;
  for (absl::string_view line : absl::StrSplit(*steps, '\n', absl::SkipEmpty())) {
    ++step_count;
    std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() == 2 && fields[1] == "fleetplan-agents") agents_step = fields[0];
  }
  ASSERT_FALSE(agents_step.empty()) << *steps;
  EXPECT_EQ(step_count, 2) << "the batch script and the agents' step only:\n" << *steps;
  std::vector<std::string> job_and_step = absl::StrSplit(agents_step, '.');
  ASSERT_EQ(job_and_step.size(), 2u) << agents_step;
  const bool cgroup = std::getenv("FLEETPLAN_SLURM_PROCTRACK") != nullptr &&
                      std::string(std::getenv("FLEETPLAN_SLURM_PROCTRACK")) == "cgroup";
  for (int i = 0; i < kNodes; ++i) {
    absl::StatusOr<std::string> listed = ContainerExec(
        Host(i), absl::StrCat("SLURM_CONF=/etc/fleetplan-slurm/slurm.conf scontrol listpids ",
                              agents_step, " | awk 'NR > 1 {print $1}'"));
    ASSERT_THAT(listed, IsOk()) << Host(i);
    std::vector<std::string> in_step = absl::StrSplit(*listed, '\n', absl::SkipEmpty());
    // The bracket keeps this shell's own command line from matching.
    absl::StatusOr<std::string> ours =
        ContainerExec(Host(i), "pgrep -f 'bin/[f]leetplan-agent|[r]ank[.]sh'");
    ASSERT_THAT(ours, IsOk()) << Host(i);
    std::vector<std::string> pids = absl::StrSplit(*ours, '\n', absl::SkipEmpty());
    EXPECT_GE(pids.size(), 3u) << Host(i) << ": the step's task, the agent, a rank";
    for (const std::string& pid : pids) {
      EXPECT_THAT(in_step, ::testing::Contains(pid)) << Host(i) << ": pid " << pid
                                                      << " is not one of step " << agents_step;
      if (!cgroup) continue;
      absl::StatusOr<std::string> group = ContainerExec(
          Host(i), absl::StrCat("grep freezer /proc/", pid, "/cgroup"));
      ASSERT_THAT(group, IsOk()) << Host(i) << " pid " << pid;
      EXPECT_THAT(std::string(absl::StripAsciiWhitespace(*group)),
                  ::testing::EndsWith(absl::StrCat("/job_", job_and_step[0], "/step_",
                                                   job_and_step[1])));
    }
  }

  ToolResult status = RunTool({"tools/fleetplan-status", spec});
  EXPECT_EQ(status.status, 0) << status.output;
  EXPECT_THAT(status.output, HasSubstr("job: running"));
  ToolResult stop = RunTool({"tools/fleetplan-stop", spec});
  EXPECT_EQ(stop.status, 0) << stop.output;
  EXPECT_THAT(Squeue(), IsEmpty());
  ExpectNothingRunning();
}

// A workdir this machine sees as the nodes do (the test bed mounts its
// shared folder on the nodes at this machine's path too): after the first
// apply, an unchanged apply and status read the nodes' state and take the
// apply lock here, with no job step; a folder whose mark is not the
// allocation's is read by a job step, which marks it again.
TEST_F(SlurmApplyTest, WhereThisMachineSeesTheWorkdirAnUnchangedApplyRunsNoJobStep) {
  const char* conf = std::getenv("SLURM_CONF");
  ASSERT_NE(conf, nullptr);
  const std::string workdir = absl::StrCat(Dirname(Dirname(conf)), "/shared/slurm-here");
  std::string spec = WriteSpec("slurm-here", "nodes = 3\ntime = \"unlimited\"\n",
                               "program = \"./rank.sh\"\n", /*fail_rank=*/"99");
  FP_ASSERT_OK_AND_ASSIGN(std::string text, ReadFileToString(spec));
  text = absl::StrReplaceAll(
      text, {{"workdir = \"/shared/slurm-here\"", absl::StrCat("workdir = \"", workdir, "\"")}});
  ASSERT_THAT(WriteFileAtomic(spec, text, 0644), IsOk());
  ToolResult apply = RunTool({"tools/fleetplan-apply", "--detach", spec}, absl::Minutes(2));
  ASSERT_EQ(apply.status, 0) << apply.output;

  // Every srun apply starts is counted by one ahead of it on PATH.
  FP_ASSERT_OK_AND_ASSIGN(std::string srun, RunScript("command -v srun"));
  const std::string counter = MakeTempDir();
  ASSERT_THAT(WriteFileAtomic(counter + "/srun",
                              absl::StrCat("#!/bin/sh\necho \"$1 $2 $3\" >>", counter,
                                           "/runs\nexec ", srun, " \"$@\"\n"),
                              0755),
              IsOk());
  const std::vector<std::pair<std::string, std::string>> counted = {
      {"PATH", absl::StrCat(counter, ":", std::getenv("PATH"))}};
  auto sruns = [&counter]() {
    absl::StatusOr<std::string> runs = ReadFileToString(counter + "/runs");
    unlink((counter + "/runs").c_str());
    return runs.ok() ? *runs : "";
  };
  auto apply_unchanged = [&]() {
    ToolResult again =
        RunTool({"tools/fleetplan-apply", "--json", spec}, absl::Minutes(2), counted);
    EXPECT_EQ(again.status, 0) << again.output;
    EXPECT_THAT(FinishedSteps(again.output).changed, IsEmpty()) << again.output;
  };

  apply_unchanged();
  EXPECT_EQ(sruns(), "");
  ToolResult status = RunTool({"tools/fleetplan-status", spec}, absl::Minutes(1), counted);
  EXPECT_EQ(status.status, 0) << status.output;
  EXPECT_THAT(status.output, HasSubstr("job: running"));
  EXPECT_EQ(sruns(), "");

  // A mark this machine cannot take for the allocation's, on one node.
  const std::string mark = absl::StrCat(workdir, "/.fleetplan/nodes/", Host(1), "/slurm-job");
  ASSERT_THAT(WriteFileAtomic(mark, "0\n", 0600), IsOk());  // never a job id
  apply_unchanged();
  std::vector<std::string> steps = absl::StrSplit(sruns(), '\n', absl::SkipEmpty());
  EXPECT_THAT(steps, ::testing::SizeIs(1));
  EXPECT_THAT(ReadFileToString(mark), Not(IsOkAndHolds("0\n")));
  apply_unchanged();
  EXPECT_EQ(sruns(), "");

  ToolResult stop = RunTool({"tools/fleetplan-stop", spec});
  EXPECT_EQ(stop.status, 0) << stop.output;
  EXPECT_THAT(Squeue(), IsEmpty());
  ExpectNothingRunning();
}

// An agent that dies ends the agents' job step on every node at once
// (srun --kill-on-bad-exit): Slurm's doing, not the agents' own
// supervision, which is held still here (the other agents stopped with
// SIGSTOP, heartbeats of 5 minutes).
TEST_F(SlurmApplyTest, AnAgentThatDiesEndsTheAgentsStepEverywhere) {
  std::string spec = WriteSpec("slurm-agent-dies", "nodes = 3\n",
                               "program = \"./rank.sh\"\nheartbeat_timeout = \"5m\"\n",
                               /*fail_rank=*/"99");
  ToolResult apply = RunTool({"tools/fleetplan-apply", "--detach", spec}, absl::Minutes(2));
  ASSERT_EQ(apply.status, 0) << apply.output;
  // The newest of a node's two is the agent, not the step's task waiting for it.
  const std::string newest_agent = "$(pgrep -n -f 'bin/[f]leetplan-agent')";
  for (int i : {0, 2}) {
    ASSERT_THAT(ContainerExec(Host(i), absl::StrCat("kill -STOP ", newest_agent)), IsOk());
  }
  absl::Time killed = absl::Now();
  ASSERT_THAT(ContainerExec(Host(1), absl::StrCat("kill -KILL ", newest_agent)), IsOk());
  for (int i = 0; i < kNodes; ++i) {
    for (const char* program : {"rank.sh", "bin/fleetplan-agent"}) {
      EXPECT_THAT(ContainerProcessesMentioning(Host(i), program, absl::Seconds(20)), IsEmpty())
          << Host(i);
    }
  }
  // Slurm's record of the step goes a moment after its processes.
  absl::StatusOr<std::string> steps;
  do {
    steps = RunScript("squeue --noheader --steps --format='%i %j'");
    ASSERT_THAT(steps, IsOk());
  } while (absl::StrContains(*steps, "fleetplan-agents") &&
           absl::Now() - killed < absl::Seconds(30) &&
           (absl::SleepFor(absl::Milliseconds(200)), true));
  EXPECT_THAT(*steps, Not(HasSubstr("fleetplan-agents")));
  EXPECT_LT(absl::Now() - killed, absl::Seconds(30));
}

// Last: it leaves the cluster a node short. A node killed while the job
// runs: the chief's agent misses its heartbeats and ends the job, the job
// steps to the dead node are bounded, and the allocation is released.
TEST_F(SlurmApplyTest, AKilledNodeEndsTheJobAndReleasesTheAllocation) {
  std::string spec = WriteSpec("slurm-killed", "nodes = 3\n",
                               "program = \"./rank.sh\"\nheartbeat_timeout = \"3s\"\n",
                               /*fail_rank=*/"99");
  ToolResult apply;
  std::thread applying([&] {
    apply = RunTool({"tools/fleetplan-apply", "--step-timeout=60s", spec}, absl::Minutes(3));
  });
  bool started = false;
  for (absl::Time deadline = absl::Now() + absl::Seconds(60); !started && absl::Now() < deadline;
       absl::SleepFor(absl::Milliseconds(200))) {
    started = true;
    for (int i = 0; i < kNodes && started; ++i) {
      started = ContainerExec(Host(i), absl::StrCat("test -f /tmp/rank-", i, ".env")).ok();
    }
  }
  EXPECT_TRUE(started) << "the ranks did not all start";
  absl::Time killed = absl::Now();
  EXPECT_THAT(RunScript(absl::StrCat("docker kill ", Host(2), " >/dev/null")), IsOk());
  applying.join();
  EXPECT_NE(apply.status, 0) << apply.output;
  EXPECT_NE(apply.status, -1) << apply.output;  // ended by itself, not by the test's timeout
  EXPECT_LT(absl::Now() - killed, absl::Seconds(90)) << apply.output;
  EXPECT_THAT(Squeue(), IsEmpty()) << apply.output;
  for (int i = 0; i < 2; ++i) {
    EXPECT_THAT(ContainerProcessesMentioningAny(Host(i), {"rank.sh", "fleetplan-agent"}), IsEmpty())
        << Host(i);
  }
}

}  // namespace
}  // namespace fleetplan
