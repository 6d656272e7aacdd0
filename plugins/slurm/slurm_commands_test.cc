#include "plugins/slurm/slurm_commands.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/protocol/agent_command.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Optional;

TEST(SlurmCommandsTest, SbatchAsksForWhatTheSettingsSay) {
  SlurmSettings settings;
  settings.partition = "gpu";
  settings.time = "04:00:00";
  settings.account = "ml";
  settings.gpus_per_node = 8;
  settings.sbatch = {"--qos=high"};
  EXPECT_THAT(SbatchArgv(settings, "fleetplan-x", 2, {"n1", "n2"}),
              ElementsAre("sbatch", "--parsable", "--job-name=fleetplan-x",
                          "--nodes=2", "--ntasks-per-node=1", "--export=NONE", "--chdir=/",
                          "--output=/dev/null", "--partition=gpu", "--time=04:00:00",
                          "--account=ml", "--gpus-per-node=8", "--nodelist=n1,n2",
                          "--qos=high"));
  EXPECT_THAT(SbatchArgv(SlurmSettings{}, "j", 3, {}),
              ElementsAre("sbatch", "--parsable", "--job-name=j", "--nodes=3",
                          "--ntasks-per-node=1", "--export=NONE", "--chdir=/",
                          "--output=/dev/null"));
}

// The holder runs only launch scripts named plainly, from its own folder.
TEST(SlurmCommandsTest, TheHolderRunsTheLaunchScriptsItIsToldOf) {
  std::string holder = HolderScript();
  EXPECT_THAT(holder, HasSubstr("d=/tmp/fleetplan-slurm-$SLURM_JOB_ID\n"));
  EXPECT_THAT(holder, HasSubstr("mkfifo \"$d/requests\""));
  EXPECT_THAT(holder, HasSubstr("*[!A-Za-z0-9._-]*) continue"));
  EXPECT_THAT(holder, HasSubstr("/bin/sh \"$d/launch-$run.sh\" </dev/null"));
  // The first host's agent hands the script over.
  EXPECT_EQ(LaunchRequestCommand("/w/.fleetplan/bin/fleetplan-agent", "42", "r1",
                                 absl::Seconds(2)),
            "exec /w/.fleetplan/bin/fleetplan-agent slurm-request --protocol=2 "
            "--dir=/tmp/fleetplan-slurm-42 --run=r1 --timeout=2s");
}

// One task per host in one step that a failing task ends everywhere; each
// task runs its own host's script.
TEST(SlurmCommandsTest, TheAgentsStepIsOneTaskPerHostKilledOnABadExit) {
  std::string script = AgentStepScript("42", {"n-0", "n-1"}, "r1");
  EXPECT_THAT(script, HasSubstr("srun --jobid=42 --job-name=fleetplan-agents "
                                "--nodelist=n-0,n-1 --nodes=2 --ntasks=2 --ntasks-per-node=1 "
                                "--overlap --kill-on-bad-exit=1 "));
  EXPECT_THAT(script,
              HasSubstr("'exec /bin/sh /tmp/fleetplan-slurm-42/agent-r1-\"$SLURMD_NODENAME\".sh'"));
  EXPECT_THAT(script, HasSubstr("echo $? >/tmp/fleetplan-slurm-42/launch-r1.exit"));
  EXPECT_EQ(AgentScriptPath("42", "r1", "n-1"), "/tmp/fleetplan-slurm-42/agent-r1-n-1.sh");
  absl::StatusOr<AgentCommand> await = ParseAgentCommandLine(
      AwaitAgentReportCommand("/w/agent/fleetplan-agent", "42", "r1", "n-1", absl::Seconds(3)));
  ASSERT_THAT(await, IsOk());
  const AgentSlurmAwait& waits = std::get<AgentSlurmAwait>(*await);
  EXPECT_EQ(waits.report, "/tmp/fleetplan-slurm-42/agent-r1-n-1.report");
  EXPECT_EQ(waits.step_exit, "/tmp/fleetplan-slurm-42/launch-r1.exit");
  EXPECT_EQ(waits.step_log, "/tmp/fleetplan-slurm-42/launch-r1.log");
  EXPECT_EQ(waits.host, "n-1");
  EXPECT_EQ(waits.timeout, absl::Seconds(3));
}

TEST(SlurmCommandsTest, AStepRunsOneTaskOnItsHostInTheNodesEnvironment) {
  CommandSpec command;
  command.command = "echo 'hi' && pwd";
  command.env = {{"A", "x y"}};
  command.cwd = "/shared/job";
  std::vector<std::string> argv = StepArgv("42", "n-1", command);
  EXPECT_THAT(argv, Contains("--jobid=42"));
  EXPECT_THAT(argv, Contains("--nodelist=n-1"));
  EXPECT_THAT(argv, Contains("--overlap"));
  EXPECT_THAT(argv, Contains("--kill-on-bad-exit=1"));
  EXPECT_THAT(argv, Contains("--export=NONE"));
  EXPECT_THAT(argv.back(), HasSubstr("export A='x y'; cd /shared/job && exec /bin/sh -c "
                                     "'echo '\\''hi'\\'' && pwd'"));
  command.cwd.clear();
  EXPECT_THAT(StepArgv("42", "n-1", command).back(), Not(HasSubstr(" cd ")));
}

TEST(SlurmCommandsTest, SqueueGivesTheFirstJob) {
  std::optional<AllocationRow> row = ParseSqueue("\n17 RUNNING fp-[0-2]\n18 PENDING (Resources)\n");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->job_id, "17");
  EXPECT_EQ(row->state, "RUNNING");
  EXPECT_EQ(row->nodelist, "fp-[0-2]");
  EXPECT_FALSE(ParseSqueue("  \n").has_value());
}

TEST(SlurmCommandsTest, HostlistsExpandAsScontrolDoes) {
  EXPECT_THAT(ExpandHostlist("fp-[0-2]"), Optional(ElementsAre("fp-0", "fp-1", "fp-2")));
  EXPECT_THAT(ExpandHostlist("n[08-10,12],login"),
              Optional(ElementsAre("n08", "n09", "n10", "n12", "login")));
  EXPECT_THAT(ExpandHostlist("r[1-2]-g[01-02]"),
              Optional(ElementsAre("r1-g01", "r1-g02", "r2-g01", "r2-g02")));
  EXPECT_THAT(ExpandHostlist("single"), Optional(ElementsAre("single")));
  EXPECT_EQ(ExpandHostlist("n[2-1]"), std::nullopt);
  EXPECT_EQ(ExpandHostlist("n[1-"), std::nullopt);
  EXPECT_EQ(ExpandHostlist(""), std::nullopt);
}

TEST(SlurmCommandsTest, SinfoRowsOfOnePartitionAddUp) {
  std::vector<PartitionRow> rows =
      ParseSinfo("debug* 3 (null)\ngpu 2 gpu:a100:8(S:0-1)\ngpu 1 gpu:4\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "debug");
  EXPECT_TRUE(rows[0].is_default);
  EXPECT_EQ(rows[0].gpus_per_node, 0);
  EXPECT_EQ(rows[1].nodes, 3);
  EXPECT_EQ(rows[1].gpus_per_node, 8);
}

TEST(SlurmCommandsTest, APartitionThatCannotGiveTheNodesIsNamed) {
  std::vector<PartitionRow> rows = ParseSinfo("debug* 3 (null)\ngpu 2 gpu:8\n");
  SlurmSettings settings;
  EXPECT_THAT(CheckPartition(rows, settings, 3), IsOk());
  settings.partition = "gpus";
  EXPECT_THAT(CheckPartition(rows, settings, 1),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("partition \"gpus\" does not exist (partitions: debug, gpu)")));
  settings.partition = "gpu";
  EXPECT_THAT(CheckPartition(rows, settings, 3),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("has 2 nodes")));
  settings.gpus_per_node = 16;
  EXPECT_THAT(CheckPartition(rows, settings, 2),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("8 GPUs per node")));
  settings.partition.clear();
  EXPECT_THAT(CheckPartition(ParseSinfo("gpu 2 gpu:8\n"), settings, 1),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no default partition")));
}

}  // namespace
}  // namespace fleetplan
