#include "tools/protocol/agent_command.h"

#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Writes `command`, reads it back and writes that again: the same words.
template <typename T>
T RoundTrip(const T& command) {
  std::vector<std::string> args = AgentArgs(command);
  absl::StatusOr<AgentCommand> parsed = ParseAgentCommand(args);
  EXPECT_THAT(parsed, IsOk());
  if (!parsed.ok() || !std::holds_alternative<T>(*parsed)) return T();
  EXPECT_EQ(AgentArgs(*parsed), args);
  EXPECT_EQ(AgentCommandName(*parsed), T::kName);
  return std::get<T>(*parsed);
}

TEST(AgentCommandTest, LaunchRoundTrips) {
  AgentLaunch launch;
  launch.node = "head";
  launch.first_rank = 2;
  launch.nproc = 2;
  launch.restarts = 1;
  launch.log_dir = "/w dir/logs";
  launch.key_file = "/w/job.key";
  launch.detach = true;
  launch.supervision.nodes = {"worker", "head"};
  launch.supervision.supervisor_port = 29501;
  launch.supervision.heartbeat_timeout = absl::Seconds(5);
  launch.hang_timeout = absl::Minutes(10);
  launch.launcher = {Launcher::kDistributedLaunch, "--local_rank"};
  launch.progress = "step (\\d+) of";
  launch.run_id = "r1";
  launch.grace_period = absl::Seconds(3);
  launch.watch_stdin = false;
  launch.program = {"/bin/prog", "--lr=0.1", "--", "it's"};
  AgentLaunch back = RoundTrip(launch);
  EXPECT_EQ(back.node, "head");
  EXPECT_EQ(back.first_rank, 2);
  EXPECT_EQ(back.supervision.nodes, launch.supervision.nodes);
  EXPECT_EQ(back.hang_timeout, absl::Minutes(10));
  EXPECT_EQ(back.launcher.launcher, Launcher::kDistributedLaunch);
  EXPECT_EQ(back.launcher.local_rank_arg, "--local_rank");
  EXPECT_FALSE(back.watch_stdin);
  EXPECT_EQ(back.progress, launch.progress);
  EXPECT_EQ(back.program, launch.program);
  EXPECT_THAT(AgentArgs(launch),
              ElementsAre("launch", "--protocol=2", "--node=head", "--first-rank=2", "--nproc=2",
                          "--restarts=1", "--log-dir=/w dir/logs", "--key-file=/w/job.key",
                          "--detach", "--nodes=worker,head", "--supervisor-port=29501",
                          "--heartbeat-timeout=5s", "--hang-timeout=10m",
                          "--launcher=distributed-launch", "--local-rank-arg=--local_rank",
                          "--progress=step (\\d+) of", "--run-id=r1", "--grace-period=3s",
                          "--watch-stdin=false", "--",
                          "/bin/prog", "--lr=0.1", "--", "it's"));
}

TEST(AgentCommandTest, DefaultsAreLeftOut) {
  AgentLaunch worker;
  worker.node = "w";
  worker.log_dir = "/l";
  worker.supervision.coordinator = "10.0.0.5:4000";
  worker.program = {"p"};
  EXPECT_THAT(AgentArgs(worker), ElementsAre("launch", "--protocol=2", "--node=w", "--log-dir=/l",
                                             "--coordinator=10.0.0.5:4000", "--", "p"));
  EXPECT_EQ(RoundTrip(worker).supervision.coordinator, "10.0.0.5:4000");
}

TEST(AgentCommandTest, AnElasticJobsOptionsRoundTrip) {
  AgentLaunch chief;
  chief.node = "a";
  chief.log_dir = "/l";
  chief.supervision.nodes = {"a", "b", "c", "d"};
  chief.supervision.supervisor_port = 29501;
  chief.supervision.elastic.min_nodes = 2;
  chief.supervision.elastic.max_node_losses = 3;
  chief.supervision.elastic.rejoin = "next-failure";
  chief.supervision.elastic.spares = {"d"};
  chief.program = {"p"};
  EXPECT_THAT(AgentArgs(chief),
              ElementsAre("launch", "--protocol=2", "--node=a", "--log-dir=/l", "--nodes=a,b,c,d",
                          "--supervisor-port=29501", "--min-nodes=2", "--max-node-losses=3",
                          "--rejoin=next-failure", "--spares=d", "--", "p"));
  AgentLaunch back = RoundTrip(chief);
  EXPECT_EQ(back.supervision.elastic.min_nodes, 2);
  EXPECT_EQ(back.supervision.elastic.max_node_losses, 3);
  EXPECT_EQ(back.supervision.elastic.rejoin, "next-failure");
  EXPECT_THAT(back.supervision.elastic.spares, ElementsAre("d"));
  AgentLaunch worker;
  worker.node = "b";
  worker.log_dir = "/l";
  worker.supervision.coordinator = "h:1";
  worker.supervision.rejoins = true;
  worker.program = {"p"};
  EXPECT_TRUE(RoundTrip(worker).supervision.rejoins);
}

// Every value of a launch is checked once, where it is parsed; the agent
// runs what passed (RunNodeAgent checks the same request again).
TEST(AgentCommandTest, RefusesALaunchItCannotRun) {
  auto refused = [](std::vector<std::string> args, const std::string& says) {
    args.insert(args.begin(), "launch");
    EXPECT_THAT(ParseAgentCommand(args),
                StatusIs(absl::StatusCode::kInvalidArgument, "launch: " + says))
        << absl::StrJoin(args, " ");
  };
  refused({"--log-dir=/l", "--", "p"}, "--node is required");
  refused({"--node=a", "--", "p"}, "--log-dir is required");
  refused({"--node=a", "--log-dir=/l"}, "no program: give it after `--`");
  refused({"--node=a", "--log-dir=/l", "--nproc=0", "--", "p"}, "--nproc must be at least 1");
  refused({"--node=a", "--log-dir=/l", "--first-rank=-1", "--", "p"}, "--first-rank must be >= 0");
  refused({"--node=a", "--log-dir=/l", "--restarts=-1", "--", "p"}, "--restarts must be >= 0");
  refused({"--node=a", "--log-dir=/l", "--heartbeat-timeout=0s", "--", "p"},
          "--heartbeat-timeout must be positive");
  refused({"--node=a", "--log-dir=/l", "--hang-timeout=-1s", "--", "p"},
          "--hang-timeout must not be negative (0: off)");
  refused({"--node=a", "--log-dir=/l", "--nodes=b,c", "--supervisor-port=1", "--", "p"},
          "--nodes must list this node ('a')");
  refused({"--node=a", "--log-dir=/l", "--nodes=a,b", "--", "p"},
          "a job of several nodes needs --supervisor-port");
  // Alone: no port, no peers.
  EXPECT_THAT(ParseAgentCommand({"launch", "--node=a", "--log-dir=/l", "--nodes=a", "--", "p"}),
              IsOk());
}

TEST(AgentCommandTest, RefusesAnElasticPolicyThatCannotHold) {
  auto refused = [](std::vector<std::string> args, const std::string& says) {
    args.insert(args.begin(), "launch");
    args.insert(args.end(), {"--", "p"});
    EXPECT_THAT(ParseAgentCommand(args),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(says)));
  };
  refused({"--node=b", "--coordinator=h:1", "--min-nodes=2"}, "they need --nodes");
  refused({"--node=a", "--nodes=a,b", "--supervisor-port=1", "--elastic"},
          "--elastic and --coordinator go together");
  refused({"--node=a", "--nodes=a,b", "--supervisor-port=1", "--rejoin=later"},
          "expected restart or next-failure");
  refused({"--node=a", "--nodes=a,b", "--supervisor-port=1", "--spares=a"},
          "'a' is not one of --nodes other than this node");
  refused({"--node=a", "--nodes=a,b", "--supervisor-port=1", "--spares=e"},
          "'e' is not one of --nodes");
  refused({"--node=a", "--nodes=a,b,c", "--supervisor-port=1", "--spares=c", "--min-nodes=3"},
          "--min-nodes=3 is more than the 2 nodes that are no spares");
  refused({"--node=a", "--nodes=a,b", "--supervisor-port=1", "--max-node-losses=-2"},
          "--max-node-losses >= -1");
}

TEST(AgentCommandTest, LogsStopStacksRoundTrip) {
  AgentLogs logs;
  logs.log_dir = "/l";
  logs.node = "n";
  logs.run_id = "r";
  logs.rank = 0;
  logs.tail = 5;
  logs.follow = true;
  AgentLogs back = RoundTrip(logs);
  EXPECT_EQ(back.rank, 0);
  EXPECT_EQ(back.tail, 5);
  EXPECT_TRUE(back.follow);
  EXPECT_EQ(back.run_id, "r");

  AgentStop stop;
  stop.log_dir = "/l";
  stop.grace_period = absl::Seconds(2);
  EXPECT_EQ(RoundTrip(stop).grace_period, absl::Seconds(2));

  AgentStacks stacks;
  stacks.log_dir = "/l";
  stacks.node = "n";
  EXPECT_EQ(RoundTrip(stacks).node, "n");

  AgentTop top;
  top.log_dir = "/l";
  top.node = "n";
  EXPECT_THAT(AgentArgs(top), ElementsAre("top", "--protocol=2", "--log-dir=/l", "--node=n"));
  EXPECT_EQ(RoundTrip(top).node, "n");
  EXPECT_FALSE(ParseAgentCommand({"top", "--protocol=2", "--node=n"}).ok());
}

TEST(AgentCommandTest, PreflightRoundTrips) {
  AgentPreflight preflight;
  preflight.request.workdir = "/w";
  preflight.request.master_port = 29500;
  preflight.request.listen_for = 2;
  preflight.activation = "failed";
  preflight.activation_output = "no such file\nbin/activate";
  AgentPreflight back = RoundTrip(preflight);
  EXPECT_EQ(PreflightRequestToJson(back.request), PreflightRequestToJson(preflight.request));
  EXPECT_EQ(back.activation, "failed");
  EXPECT_EQ(back.activation_output, preflight.activation_output);
}

TEST(AgentCommandTest, ProbesVerifyAndSessionRoundTrip) {
  AgentProbeListen listen;
  listen.port = 4000;
  listen.expect = 3;
  listen.timeout = absl::Minutes(5);
  EXPECT_EQ(RoundTrip(listen).expect, 3);
  AgentProbeConnect connect;
  connect.target = "[::1]:4000";
  EXPECT_EQ(RoundTrip(connect).target, "[::1]:4000");
  AgentProbeIfname ifname;
  ifname.address = "10.0.0.1";
  EXPECT_EQ(RoundTrip(ifname).address, "10.0.0.1");
  AgentVerifyTree verify;
  verify.root = "/w";
  verify.manifest = "/w/.fleetplan/nodes/n/manifest";
  EXPECT_EQ(RoundTrip(verify).manifest, verify.manifest);
  // Apply's sessions say nothing more than agents before the option read.
  EXPECT_THAT(AgentArgs(AgentSession()), ElementsAre("session", "--protocol=2"));
  RoundTrip(AgentSession());
  AgentSession held;
  held.idle_timeout = absl::Minutes(20);
  EXPECT_EQ(RoundTrip(held).idle_timeout, absl::Minutes(20));
  held.idle_timeout = absl::Milliseconds(10);
  EXPECT_THAT(ParseAgentCommand(AgentArgs(held)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--idle-timeout")));
}

TEST(AgentCommandTest, RelayRoundTrips) {
  AgentRelayServe serve;
  serve.root = "/w";
  serve.manifest = "/m";
  serve.key_file = "/k";
  serve.port = 29501;
  serve.expect = 4;
  EXPECT_EQ(RoundTrip(serve).expect, 4);
  AgentRelayFetch fetch;
  fetch.key_file = "/k";
  fetch.from = "10.0.0.2:29501";
  fetch.from_node = "n2";
  fetch.fallback = "10.0.0.1:29501";
  fetch.fallback_node = "chief";
  fetch.port = 29501;
  fetch.expect = 1;
  fetch.root = "/w";
  fetch.manifest = "/m";
  fetch.expect_digest = "abc";
  fetch.all = true;
  AgentRelayFetch back = RoundTrip(fetch);
  EXPECT_EQ(back.fallback_node, "chief");
  EXPECT_TRUE(back.all);
}

TEST(AgentCommandTest, SlurmWaitsRoundTrip) {
  AgentSlurmRequest request;
  request.dir = "/tmp/fleetplan-slurm-7";
  request.run_id = "r.1";
  request.timeout = absl::Minutes(2);
  EXPECT_EQ(RoundTrip(request).run_id, "r.1");
  AgentSlurmAwait await;
  await.report = "/tmp/x.report";
  await.step_exit = "/tmp/x.exit";
  await.step_log = "/tmp/x.log";
  await.host = "n-0";
  await.timeout = absl::Seconds(90);
  EXPECT_EQ(RoundTrip(await).timeout, absl::Seconds(90));
}

TEST(AgentCommandTest, RefusesWhatItDoesNotTake) {
  EXPECT_THAT(ParseAgentCommand({}), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("no subcommand; one of launch, logs")));
  EXPECT_THAT(ParseAgentCommand({"log"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("did you mean `logs`")));
  EXPECT_THAT(ParseAgentCommand({"--logs", "--log-dir=/l"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("protocol 1")));
  EXPECT_THAT(ParseAgentCommand({"stop", "--log-dir=/l", "--node=n"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "stop: unknown option --node; its options: --log-dir, --grace-period"));
  EXPECT_THAT(ParseAgentCommand({"logs", "--log-dir=/l", "--node=n", "--tai=3"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("did you mean --tail?")));
  EXPECT_THAT(ParseAgentCommand({"logs", "--log-dir=/l", "--log-dir=/m", "--node=n"}),
              StatusIs(absl::StatusCode::kInvalidArgument, "logs: --log-dir is given twice"));
  EXPECT_THAT(ParseAgentCommand({"logs", "--log-dir=/l"}),
              StatusIs(absl::StatusCode::kInvalidArgument, "logs: --node is required"));
  EXPECT_THAT(ParseAgentCommand({"logs", "--log-dir=/l", "--node=n", "--rank=x"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "logs: --rank=x: a whole number expected"));
  EXPECT_THAT(ParseAgentCommand({"logs", "--log-dir=/l", "--node=n", "extra"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "logs: takes no operands, not 'extra'"));
  EXPECT_THAT(ParseAgentCommand({"logs", "--log-dir", "--node=n"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "logs: --log-dir needs a value: --log-dir=DIR"));
  EXPECT_THAT(ParseAgentCommand({"session", "--protocol=3"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("this agent speaks protocol 2, the command --protocol=3")));
}

TEST(AgentCommandTest, RefusesConflicts) {
  EXPECT_THAT(ParseAgentCommand({"launch", "--node=a", "--nodes=a,b", "--coordinator=h:1", "--",
                                 "p"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("launch: --nodes and --coordinator exclude each other")));
  EXPECT_THAT(ParseAgentCommand({"launch", "--node=a", "--supervisor-port=4", "--", "p"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--supervisor-port and --nodes go together")));
  EXPECT_THAT(ParseAgentCommand({"relay-fetch", "--from=h:1", "--root=/w", "--manifest=/m",
                                 "--key-file=/k", "--fallback-node=c"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--fallback-node and --fallback go together")));
  EXPECT_THAT(ParseAgentCommand({"preflight", "--activation=maybe"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("none, ok or failed")));
  EXPECT_THAT(ParseAgentCommand({"slurm-request", "--dir=/d", "--run=a/b"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--run=a/b")));
}

TEST(AgentCommandTest, ProtocolIsOptionalByHand) {
  EXPECT_THAT(ParseAgentCommand({"stop", "--log-dir=/l"}), IsOk());
}

TEST(AgentCommandTest, CommandLineQuotesAndReadsBack) {
  AgentStop stop;
  stop.log_dir = "/w dir/logs";
  std::string line = AgentCommandLine("/w dir/.fleetplan/bin/fleetplan-agent", stop);
  EXPECT_EQ(line, "'/w dir/.fleetplan/bin/fleetplan-agent' stop --protocol=2 "
                  "'--log-dir=/w dir/logs'");
  absl::StatusOr<AgentCommand> back = ParseAgentCommandLine(absl::StrCat("exec ", line));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(std::get<AgentStop>(*back).log_dir, "/w dir/logs");
  back = ParseAgentCommandLine(absl::StrCat(line, " && mv a b"));
  EXPECT_THAT(back, IsOk());
  EXPECT_THAT(ParseAgentCommandLine("cat /etc/passwd"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("runs no fleetplan-agent")));
}

TEST(AgentCommandTest, NodeSideValuesAreWrittenAsShell) {
  AgentPreflight preflight;
  preflight.activation = "ok";
  std::string line = AgentCommandLine("agent/fleetplan-agent", preflight,
                                      {{"activation", "\"$a\""}, {"activation-output", "\"$o\""}});
  EXPECT_THAT(line, HasSubstr(" --activation=\"$a\" --activation-output=\"$o\""));
  EXPECT_THAT(line, ::testing::Not(HasSubstr("--activation=ok")));
}

TEST(AgentCommandTest, UsageOfOptions) {
  std::string usage = OptionsUsage<AgentLaunch>();
  EXPECT_THAT(usage, HasSubstr("--heartbeat-timeout=DURATION (30s)"));
  EXPECT_THAT(usage, HasSubstr("--watch-stdin (on)"));
  EXPECT_THAT(usage, HasSubstr("-- PROGRAM ARGS..."));
  EXPECT_THAT(OptionsUsage<AgentSession>(), HasSubstr("--idle-timeout=DURATION (3s)"));
}

}  // namespace
}  // namespace fleetplan
