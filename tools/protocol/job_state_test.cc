#include "tools/protocol/job_state.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

NodeJobState Sample() {
  NodeJobState state;
  state.run_id = "20261123T200102Z-77";
  state.node = "b";
  state.coordinator = false;
  state.agent_pid = 4242;
  state.generation = 1;
  state.max_restarts = 2;
  state.phase = JobPhase::kFailed;
  state.started_at = absl::FromUnixMillis(1795463000123);
  state.ended_at = absl::FromUnixMillis(1795463100456);
  state.last_heartbeat = absl::FromUnixMillis(1795463100000);
  state.updated_at = absl::FromUnixMillis(1795463100456);
  state.heartbeat_timeout = absl::Milliseconds(2500);
  state.ranks = {{2, 100, 0}, {3, 101, 1}};
  state.failure = JobFailure{"b", 3, 1, ""};
  state.exit_status = 1;
  return state;
}

TEST(JobStateTest, RoundTripsEveryField) {
  NodeJobState state = Sample();
  absl::StatusOr<NodeJobState> parsed = JobStateFromJson(JobStateToJson(state));
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(parsed->run_id, state.run_id);
  EXPECT_EQ(parsed->node, "b");
  EXPECT_FALSE(parsed->coordinator);
  EXPECT_EQ(parsed->agent_pid, 4242);
  EXPECT_EQ(parsed->generation, 1);
  EXPECT_EQ(parsed->max_restarts, 2);
  EXPECT_EQ(parsed->phase, JobPhase::kFailed);
  EXPECT_EQ(parsed->started_at, state.started_at);
  EXPECT_EQ(parsed->ended_at, state.ended_at);
  EXPECT_EQ(parsed->last_heartbeat, state.last_heartbeat);
  EXPECT_EQ(parsed->updated_at, state.updated_at);
  EXPECT_EQ(parsed->heartbeat_timeout, absl::Milliseconds(2500));
  ASSERT_EQ(parsed->ranks.size(), 2u);
  EXPECT_EQ(parsed->ranks[1].rank, 3);
  EXPECT_EQ(parsed->ranks[1].pid, 101);
  EXPECT_EQ(parsed->ranks[1].status, 1);
  ASSERT_TRUE(parsed->failure.has_value());
  EXPECT_EQ(DescribeFailure(*parsed->failure), "rank 3 on node 'b' failed with exit status 1");
  EXPECT_EQ(parsed->exit_status, 1);
}

TEST(JobStateTest, AFailureCarriesWhatTheRankSaid) {
  NodeJobState state = Sample();
  state.failure->error = RankError{"ValueError", "bad shard 7", "/w/train.py", 3, "load", ""};
  absl::StatusOr<NodeJobState> parsed = JobStateFromJson(JobStateToJson(state));
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(parsed->failure->error, state.failure->error);
  EXPECT_EQ(DescribeFailureInFull(*parsed->failure),
            "rank 3 on node 'b' failed with exit status 1: ValueError: bad shard 7 "
            "(at /w/train.py:3 in load)");
  state.failure->error = RankError();
  state.failure->error->log_tail = "step 9\nKilled";
  EXPECT_EQ(DescribeFailureInFull(*state.failure),
            "rank 3 on node 'b' failed with exit status 1\nlast lines of rank 3:\n  step 9\n  Killed");
  // What agents before error files wrote: no "error".
  nlohmann::json old = nlohmann::json::parse(JobStateToJson(Sample()));
  ASSERT_EQ(old["failure"].erase("error"), 1u);
  ASSERT_THAT(JobStateFromJson(old.dump()), IsOk());
}

TEST(JobStateTest, RoundTripsTheMembership) {
  NodeJobState state = Sample();
  state.generations = {{0, absl::FromUnixSeconds(1795463000), {"a", "b", "c", "d"}},
                       {1, absl::FromUnixSeconds(1795463050), {"a", "b", "d"}}};
  state.lost = {{"c", absl::FromUnixSeconds(1795463049), "no heartbeat for 10s"}};
  state.spares = {"e"};
  state.node_losses = 1;
  state.restarts_used = 0;
  state.waiting = "spare";
  absl::StatusOr<NodeJobState> parsed = JobStateFromJson(JobStateToJson(state));
  ASSERT_THAT(parsed, IsOk());
  ASSERT_EQ(parsed->generations.size(), 2u);
  EXPECT_EQ(parsed->generations[1].generation, 1);
  EXPECT_EQ(parsed->generations[1].started_at, absl::FromUnixSeconds(1795463050));
  EXPECT_THAT(parsed->generations[1].members, testing::ElementsAre("a", "b", "d"));
  ASSERT_EQ(parsed->lost.size(), 1u);
  EXPECT_EQ(parsed->lost[0].node, "c");
  EXPECT_EQ(parsed->lost[0].at, absl::FromUnixSeconds(1795463049));
  EXPECT_EQ(parsed->lost[0].reason, "no heartbeat for 10s");
  EXPECT_THAT(parsed->spares, testing::ElementsAre("e"));
  EXPECT_EQ(parsed->node_losses, 1);
  EXPECT_EQ(parsed->waiting, "spare");
  EXPECT_EQ(parsed->restarts_used, 0);
  // What agents before elastic jobs wrote: none of it.
  nlohmann::json old = nlohmann::json::parse(JobStateToJson(Sample()));
  for (const char* key :
       {"generations", "lost", "spares", "node_losses", "restarts_used", "waiting"}) {
    ASSERT_EQ(old.erase(key), 1u) << key;
  }
  absl::StatusOr<NodeJobState> before = JobStateFromJson(old.dump());
  ASSERT_THAT(before, IsOk());
  EXPECT_EQ(before->restarts_used, before->generation);
  nlohmann::json bad = nlohmann::json::parse(JobStateToJson(state));
  bad["lost"][0]["at"] = 7;
  EXPECT_THAT(JobStateFromJson(bad.dump()), StatusIs(absl::StatusCode::kInvalidArgument));
  bad = nlohmann::json::parse(JobStateToJson(state));
  bad["generations"][0]["members"] = {1};
  EXPECT_THAT(JobStateFromJson(bad.dump()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "job.json: \"members\" is not a list of strings"));
}

TEST(JobStateTest, TimesNotYetReachedAreNull) {
  NodeJobState state;
  state.phase = JobPhase::kStarting;
  std::string json = JobStateToJson(state);
  EXPECT_THAT(json, testing::HasSubstr("\"ended_at\": null"));
  absl::StatusOr<NodeJobState> parsed = JobStateFromJson(json);
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(parsed->ended_at, absl::InfinitePast());
  EXPECT_FALSE(parsed->failure.has_value());
}

TEST(JobStateTest, NamesWhatIsWrong) {
  EXPECT_THAT(JobStateFromJson("[]"), StatusIs(absl::StatusCode::kInvalidArgument,
                                               "job.json: not a JSON object"));
  EXPECT_THAT(JobStateFromJson("{"), StatusIs(absl::StatusCode::kInvalidArgument,
                                              "job.json: not a JSON object"));
  std::string json = JobStateToJson(Sample());
  std::string bad_state = json;
  bad_state.replace(bad_state.find("\"failed\""), 8, "\"dozing\"");
  EXPECT_THAT(JobStateFromJson(bad_state),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "job.json: \"state\" is not a state: dozing"));
  std::string no_pid = json;
  no_pid.replace(no_pid.find("\"agent_pid\""), 11, "\"agent_pie\"");
  EXPECT_THAT(JobStateFromJson(no_pid), StatusIs(absl::StatusCode::kInvalidArgument,
                                                 "job.json: \"agent_pid\" is missing"));
}

TEST(JobStateTest, PhasesByName) {
  for (JobPhase phase : {JobPhase::kStarting, JobPhase::kRunning, JobPhase::kSucceeded,
                         JobPhase::kFailed, JobPhase::kStopped}) {
    EXPECT_EQ(ParseJobPhase(JobPhaseName(phase)), phase);
  }
  EXPECT_EQ(ParseJobPhase("none"), std::nullopt);
  EXPECT_FALSE(IsFinal(JobPhase::kRunning));
  EXPECT_TRUE(IsFinal(JobPhase::kStopped));
}

TEST(JobStateTest, AStateNotWrittenForTwoTimeoutsIsStale) {
  NodeJobState state = Sample();
  state.phase = JobPhase::kRunning;
  state.heartbeat_timeout = absl::Seconds(30);
  EXPECT_FALSE(IsStale(state, state.updated_at + absl::Seconds(59)));
  EXPECT_TRUE(IsStale(state, state.updated_at + absl::Seconds(61)));
  state.phase = JobPhase::kSucceeded;  // an ended job is never stale
  EXPECT_FALSE(IsStale(state, state.updated_at + absl::Hours(1)));
}

TEST(JobStateTest, NodeLossIsDescribedWithItsReason) {
  EXPECT_EQ(DescribeFailure(JobFailure{"c", -1, 1, "no heartbeat for 30s"}),
            "node 'c' failed: no heartbeat for 30s");
}

TEST(JobStateTest, ARankTheOomKillerEndedIsDescribedSo) {
  JobFailure failure{"b", 3, 137};
  failure.error = FromLogTail("");
  failure.error->death = {9, false, true, 70u << 20, 64u << 20};
  EXPECT_EQ(DescribeFailure(failure),
            "rank 3 on node 'b' failed with exit status 137: killed by SIGKILL (signal 9); the "
            "kernel's OOM killer ended it: peak RSS 70.0 MiB of a 64.0 MiB limit");
}

TEST(JobStateTest, AHungJobIsDescribedWithWhereEveryRankStood) {
  NodeJobState state;
  state.phase = JobPhase::kFailed;
  state.exit_status = 124;
  state.failure = JobFailure{"", -1, 124, "no rank made progress for 20s", std::nullopt,
                             GroupStacks({{0, "a", StackWhere{"main", "t.py", 9, "barrier"}, {}},
                                          {1, "b", std::nullopt, {"py-bt: gdb was not found"}}})};
  absl::StatusOr<NodeJobState> parsed = JobStateFromJson(JobStateToJson(state));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(parsed->failure.has_value());
  EXPECT_EQ(DescribeFailure(*parsed->failure), "the job hung: no rank made progress for 20s");
  EXPECT_EQ(DescribeFailureInFull(*parsed->failure),
            "the job hung: no rank made progress for 20s\n"
            "where each rank stood (its innermost frame of the user's code; every stack is in "
            "rank-N.stacks-GEN.txt beside the rank logs):\n"
            "  rank 0 on a: main (t.py:9) calling barrier\n"
            "  rank 1 on b: no frame of the user's found\n"
            "  skip on b (rank 1): py-bt: gdb was not found");
  // Other failures keep their form: no "stacks".
  state.failure = JobFailure{"b", 3, 1, ""};
  EXPECT_EQ(JobStateToJson(state).find("stacks"), std::string::npos);
}

TEST(JobStateTest, Paths) {
  EXPECT_EQ(JobStatePath("/w/.fleetplan/nodes/a/logs"), "/w/.fleetplan/nodes/a/logs/job.json");
  EXPECT_EQ(RankLogPath(RunDir("/l", "r1"), 3), "/l/r1/rank-3.log");
  EXPECT_EQ(AgentLogPath("/l"), "/l/agent.log");
  EXPECT_EQ(MakeRunId(absl::FromUnixSeconds(0), 12), "19700101T000000Z-12");
}

}  // namespace
}  // namespace fleetplan
