#include "tools/agent/job_coordinator.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

using Kind = JobCoordinator::Order::Kind;

const absl::Time kT0 = absl::FromUnixSeconds(1000);

JobCoordinator::Options ThreeNodes(int restarts = 0) {
  JobCoordinator::Options options;
  options.nodes = {"a", "b", "c"};
  options.max_restarts = restarts;
  options.join_timeout = absl::Seconds(30);
  options.restart_backoff = absl::Seconds(1);
  return options;
}

std::vector<Kind> Kinds(const std::vector<JobCoordinator::Order>& orders) {
  std::vector<Kind> kinds;
  for (const auto& order : orders) kinds.push_back(order.kind);
  return kinds;
}

// Joins every node and starts generation 0.
void JoinAll(JobCoordinator& job) {
  for (const char* node : {"a", "b", "c"}) job.Joined(node);
  std::vector<JobCoordinator::Order> orders = job.Poll(kT0);
  ASSERT_EQ(orders.size(), 1u);
  EXPECT_EQ(orders[0].kind, Kind::kStart);
  EXPECT_EQ(orders[0].generation, 0);
  for (const char* node : {"a", "b", "c"}) job.Started(node, 0);
  EXPECT_TRUE(job.Poll(kT0).empty());
  EXPECT_EQ(job.phase(), JobPhase::kRunning);
}

TEST(JobCoordinatorTest, StartsOnlyOnceEveryNodeJoined) {
  JobCoordinator job(ThreeNodes(), kT0);
  job.Joined("a");
  job.Joined("b");
  EXPECT_TRUE(job.Poll(kT0 + absl::Seconds(1)).empty());
  EXPECT_EQ(job.phase(), JobPhase::kStarting);
  job.Joined("c");
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(2))), testing::ElementsAre(Kind::kStart));
}

TEST(JobCoordinatorTest, ANodeThatNeverJoinsFailsTheJobNamingIt) {
  JobCoordinator job(ThreeNodes(), kT0);
  job.Joined("a");
  job.Joined("c");
  EXPECT_TRUE(job.Poll(kT0 + absl::Seconds(30)).empty());
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(31))), testing::ElementsAre(Kind::kEnd));
  EXPECT_EQ(job.phase(), JobPhase::kFailed);
  ASSERT_TRUE(job.failure().has_value());
  EXPECT_EQ(DescribeFailure(*job.failure()),
            "node 'b' failed: its agent did not reach the coordinator within 30s");
  EXPECT_EQ(job.exit_status(), 1);
}

TEST(JobCoordinatorTest, SucceedsWhenEveryNodesRanksSucceeded) {
  JobCoordinator job(ThreeNodes(), kT0);
  JoinAll(job);
  job.RanksEnded("a", 0, {{0, 0}, {1, 0}}, {});
  job.RanksEnded("b", 0, {{2, 0}}, {});
  EXPECT_TRUE(job.Poll(kT0).empty());
  job.RanksEnded("c", 0, {{3, 0}}, {});
  EXPECT_THAT(Kinds(job.Poll(kT0)), testing::ElementsAre(Kind::kEnd));
  EXPECT_EQ(job.phase(), JobPhase::kSucceeded);
  EXPECT_EQ(job.exit_status(), 0);
  EXPECT_FALSE(job.failure().has_value());
}

TEST(JobCoordinatorTest, AFailedRankStopsEveryNodeAndFailsWithoutRestarts) {
  JobCoordinator job(ThreeNodes(), kT0);
  JoinAll(job);
  job.RanksEnded("b", 0, {{2, 0}, {3, 7}}, {{3, 7}});
  EXPECT_THAT(Kinds(job.Poll(kT0)), testing::ElementsAre(Kind::kStop));
  // The stopped nodes report their ranks killed: not a cause.
  job.RanksEnded("a", 0, {{0, 143}, {1, 143}}, {});
  EXPECT_TRUE(job.Poll(kT0).empty());
  job.RanksEnded("c", 0, {{4, 143}}, {});
  EXPECT_THAT(Kinds(job.Poll(kT0)), testing::ElementsAre(Kind::kEnd));
  EXPECT_EQ(job.phase(), JobPhase::kFailed);
  EXPECT_EQ(DescribeFailure(*job.failure()), "rank 3 on node 'b' failed with exit status 7");
  EXPECT_EQ(job.exit_status(), 7);
}

TEST(JobCoordinatorTest, TheFailureCarriesWhatTheFirstFailedRankSaid) {
  JobCoordinator job(ThreeNodes(), kT0);
  JoinAll(job);
  RankError error{"ValueError", "bad shard 7", "/w/train.py", 3, "load", ""};
  job.RanksEnded("b", 0, {{2, 0}, {3, 1}}, {{3, 1}}, error);
  // A later node's failure is no cause, nor is what its rank said.
  job.RanksEnded("c", 0, {{4, 1}}, {{4, 1}}, RankError{"OSError", "later", "", 0, "", ""});
  ASSERT_TRUE(job.failure().has_value());
  EXPECT_EQ(job.failure()->error, error);
  EXPECT_EQ(DescribeFailure(*job.failure()),
            "rank 3 on node 'b' failed with exit status 1: ValueError: bad shard 7 "
            "(at /w/train.py:3 in load)");
}

TEST(JobCoordinatorTest, RestartsTheWholeJobAsTheNextGenerationAfterABackoff) {
  JobCoordinator job(ThreeNodes(/*restarts=*/1), kT0);
  JoinAll(job);
  job.RanksEnded("c", 0, {{4, 1}}, {{4, 1}});
  EXPECT_THAT(Kinds(job.Poll(kT0)), testing::ElementsAre(Kind::kStop));
  job.RanksEnded("a", 0, {{0, 143}}, {});
  job.RanksEnded("b", 0, {{2, 143}}, {});
  EXPECT_TRUE(job.Poll(kT0).empty());  // backoff begins
  EXPECT_TRUE(job.Poll(kT0 + absl::Milliseconds(900)).empty());
  std::vector<JobCoordinator::Order> orders = job.Poll(kT0 + absl::Seconds(1));
  ASSERT_EQ(orders.size(), 1u);
  EXPECT_EQ(orders[0].kind, Kind::kStart);
  EXPECT_EQ(orders[0].generation, 1);
  EXPECT_EQ(job.generation(), 1);
  // A late report of the old generation changes nothing.
  job.RanksEnded("a", 0, {{0, 1}}, {{0, 1}});
  EXPECT_TRUE(job.Poll(kT0 + absl::Seconds(2)).empty());
  // The budget is spent on the next failure.
  job.RanksEnded("a", 1, {{0, 3}}, {{0, 3}});
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(3))), testing::ElementsAre(Kind::kStop));
  job.RanksEnded("b", 1, {{2, 143}}, {});
  job.RanksEnded("c", 1, {{4, 143}}, {});
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(3))), testing::ElementsAre(Kind::kEnd));
  EXPECT_EQ(DescribeFailure(*job.failure()), "rank 0 on node 'a' failed with exit status 3");
  EXPECT_EQ(job.exit_status(), 3);
}

TEST(JobCoordinatorTest, ASucceededGenerationAfterARestartSucceeds) {
  JobCoordinator job(ThreeNodes(/*restarts=*/2), kT0);
  JoinAll(job);
  job.RanksEnded("a", 0, {{0, 1}}, {{0, 1}});
  job.Poll(kT0);
  job.RanksEnded("b", 0, {{2, 143}}, {});
  job.RanksEnded("c", 0, {{4, 143}}, {});
  job.Poll(kT0);
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(1))), testing::ElementsAre(Kind::kStart));
  for (const char* node : {"a", "b", "c"}) job.RanksEnded(node, 1, {{0, 0}}, {});
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(5))), testing::ElementsAre(Kind::kEnd));
  EXPECT_EQ(job.phase(), JobPhase::kSucceeded);
  EXPECT_EQ(job.generation(), 1);
}

TEST(JobCoordinatorTest, ALostNodeStopsTheJobWithoutRestart) {
  JobCoordinator job(ThreeNodes(/*restarts=*/3), kT0);
  JoinAll(job);
  job.Lost("b", "no heartbeat for 30s", kT0);
  EXPECT_THAT(Kinds(job.Poll(kT0)), testing::ElementsAre(Kind::kStop));
  job.RanksEnded("a", 0, {{0, 143}}, {});
  job.RanksEnded("c", 0, {{4, 143}}, {});
  EXPECT_THAT(Kinds(job.Poll(kT0)), testing::ElementsAre(Kind::kEnd));
  EXPECT_EQ(job.phase(), JobPhase::kFailed);
  EXPECT_EQ(DescribeFailure(*job.failure()), "node 'b' failed: no heartbeat for 30s");
}

TEST(JobCoordinatorTest, AStopEndsTheJobStoppedWhateverTheRestarts) {
  JobCoordinator job(ThreeNodes(/*restarts=*/3), kT0);
  JoinAll(job);
  job.StopRequested();
  EXPECT_THAT(Kinds(job.Poll(kT0)), testing::ElementsAre(Kind::kStop));
  // A node stopped by the same request may drop its connection.
  job.Lost("b", "connection closed", kT0);
  job.RanksEnded("a", 0, {{0, 143}}, {});
  job.RanksEnded("c", 0, {{4, 143}}, {});
  EXPECT_THAT(Kinds(job.Poll(kT0)), testing::ElementsAre(Kind::kEnd));
  EXPECT_EQ(job.phase(), JobPhase::kStopped);
  EXPECT_FALSE(job.failure().has_value());
  EXPECT_EQ(job.exit_status(), 143);
}

TEST(JobCoordinatorTest, AStopWhileJoiningEndsAtOnce) {
  JobCoordinator job(ThreeNodes(), kT0);
  job.Joined("a");
  job.StopRequested();
  EXPECT_THAT(Kinds(job.Poll(kT0)), testing::ElementsAre(Kind::kEnd));
  EXPECT_EQ(job.phase(), JobPhase::kStopped);
}

TEST(JobCoordinatorTest, AStopDuringTheBackoffStartsNothing) {
  JobCoordinator job(ThreeNodes(/*restarts=*/1), kT0);
  JoinAll(job);
  job.RanksEnded("a", 0, {{0, 1}}, {{0, 1}});
  job.Poll(kT0);
  job.RanksEnded("b", 0, {{2, 143}}, {});
  job.RanksEnded("c", 0, {{4, 143}}, {});
  job.Poll(kT0);
  job.StopRequested();
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(5))), testing::ElementsAre(Kind::kEnd));
  EXPECT_EQ(job.phase(), JobPhase::kStopped);
}

TEST(JobCoordinatorTest, OneNodeJobsNeedNoPeers) {
  JobCoordinator::Options options;
  options.nodes = {"solo"};
  JobCoordinator job(options, kT0);
  job.Joined("solo");
  EXPECT_THAT(Kinds(job.Poll(kT0)), testing::ElementsAre(Kind::kStart));
  job.RanksEnded("solo", 0, {{0, 0}, {1, 0}}, {});
  EXPECT_THAT(Kinds(job.Poll(kT0)), testing::ElementsAre(Kind::kEnd));
  EXPECT_EQ(job.phase(), JobPhase::kSucceeded);
}

JobCoordinator::Options Watched(int restarts = 0) {
  JobCoordinator::Options options = ThreeNodes(restarts);
  options.hang_timeout = absl::Seconds(20);
  options.collect_timeout = absl::Seconds(60);
  return options;
}

std::vector<RankStack> Stacks(std::vector<int> ranks, StackWhere where) {
  std::vector<RankStack> stacks;
  for (int rank : ranks) stacks.push_back({rank, "", where, {}});
  return stacks;
}

const StackWhere kBarrier{"main", "hang.py", 30, "barrier"};
const StackWhere kBlocked{"block_forever", "hang.py", 12, "sleep"};

TEST(JobCoordinatorTest, ProgressAnywhereKeepsTheJobFromHanging) {
  JobCoordinator job(Watched(), kT0);
  JoinAll(job);
  EXPECT_TRUE(job.Poll(kT0 + absl::Seconds(20)).empty());  // not yet past
  job.Progressed("c", 0, kT0 + absl::Seconds(15));
  EXPECT_TRUE(job.Poll(kT0 + absl::Seconds(30)).empty());
  job.Progressed("c", 7, kT0 + absl::Seconds(40));  // another generation's: no
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(36))), testing::ElementsAre(Kind::kCollectStacks));
}

TEST(JobCoordinatorTest, AHungJobFailsWith124AndWhereEveryRankStood) {
  JobCoordinator job(Watched(), kT0);
  JoinAll(job);
  std::vector<JobCoordinator::Order> orders = job.Poll(kT0 + absl::Seconds(21));
  ASSERT_THAT(Kinds(orders), testing::ElementsAre(Kind::kCollectStacks));
  EXPECT_EQ(orders[0].generation, 0);
  job.StacksReported("a", 0, Stacks({0, 1}, kBarrier));
  job.StacksReported("b", 0, Stacks({2, 3}, kBarrier));
  EXPECT_TRUE(job.Poll(kT0 + absl::Seconds(22)).empty());  // c has not answered
  std::vector<RankStack> c = Stacks({4}, kBlocked);
  c.push_back({5, "", kBarrier, {"py-bt: gdb was not found on PATH"}});
  job.StacksReported("c", 0, c);
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(23))), testing::ElementsAre(Kind::kStop));
  for (const char* node : {"a", "b", "c"}) job.RanksEnded(node, 0, {{0, 143}}, {});
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(24))), testing::ElementsAre(Kind::kEnd));
  EXPECT_EQ(job.phase(), JobPhase::kFailed);
  EXPECT_EQ(job.exit_status(), 124);
  ASSERT_TRUE(job.failure().has_value() && job.failure()->stacks.has_value());
  EXPECT_EQ(DescribeFailure(*job.failure()), "the job hung: no rank made progress for 20s");
  EXPECT_THAT(SummaryLines(*job.failure()->stacks),
              testing::ElementsAre("ranks 0-3,5 on a,b,c: main (hang.py:30) calling barrier",
                                   "rank 4 on c: block_forever (hang.py:12) calling sleep",
                                   "skip on c (rank 5): py-bt: gdb was not found on PATH"));
}

TEST(JobCoordinatorTest, ANodeThatSendsNoStacksIsNamedAfterTheCollectTimeout) {
  JobCoordinator job(Watched(), kT0);
  JoinAll(job);
  job.Poll(kT0 + absl::Seconds(21));
  job.StacksReported("a", 0, Stacks({0}, kBarrier));
  job.StacksReported("b", 0, Stacks({1}, kBarrier));
  EXPECT_TRUE(job.Poll(kT0 + absl::Seconds(80)).empty());
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(81))), testing::ElementsAre(Kind::kStop));
  EXPECT_THAT(SummaryLines(*job.failure()->stacks),
              testing::ElementsAre("ranks 0,1 on a,b: main (hang.py:30) calling barrier",
                                   "skip on c: its agent sent no stacks within 1m"));
}

TEST(JobCoordinatorTest, AHungGenerationRestartsWhileRestartsAreLeft) {
  JobCoordinator job(Watched(/*restarts=*/1), kT0);
  JoinAll(job);
  job.Poll(kT0 + absl::Seconds(21));
  for (const char* node : {"a", "b", "c"}) job.StacksReported(node, 0, {});
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(22))), testing::ElementsAre(Kind::kStop));
  for (const char* node : {"a", "b", "c"}) job.RanksEnded(node, 0, {{0, 143}}, {});
  EXPECT_TRUE(job.Poll(kT0 + absl::Seconds(22)).empty());  // backoff
  std::vector<JobCoordinator::Order> orders = job.Poll(kT0 + absl::Seconds(24));
  ASSERT_THAT(Kinds(orders), testing::ElementsAre(Kind::kStart));
  EXPECT_EQ(orders[0].generation, 1);
  // The new generation has its own 20 s from its start.
  EXPECT_TRUE(job.Poll(kT0 + absl::Seconds(43)).empty());
  for (const char* node : {"a", "b", "c"}) job.RanksEnded(node, 1, {{0, 0}}, {});
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(44))), testing::ElementsAre(Kind::kEnd));
  EXPECT_EQ(job.phase(), JobPhase::kSucceeded);
  EXPECT_EQ(job.exit_status(), 0);
}

TEST(JobCoordinatorTest, ARankFailingWhileStacksAreCollectedIsTheFailure) {
  JobCoordinator job(Watched(), kT0);
  JoinAll(job);
  job.Poll(kT0 + absl::Seconds(21));
  job.RanksEnded("b", 0, {{2, 1}}, {{2, 1}});
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(22))), testing::ElementsAre(Kind::kStop));
  EXPECT_EQ(job.failure()->rank, 2);
  EXPECT_FALSE(job.failure()->stacks.has_value());
}

TEST(JobCoordinatorTest, WithoutAHangTimeoutSilenceIsNoHang) {
  JobCoordinator job(ThreeNodes(), kT0);
  JoinAll(job);
  EXPECT_TRUE(job.Poll(kT0 + absl::Hours(48)).empty());
}

// An elastic job of four nodes: a (the chief), b, c, d.
JobCoordinator::Options Elastic(int min_nodes, std::vector<std::string> spares = {},
                                int restarts = 0) {
  JobCoordinator::Options options;
  options.nodes = {"a", "b", "c", "d"};
  options.elastic.spares = std::move(spares);
  options.elastic.min_nodes = min_nodes;
  options.max_restarts = restarts;
  options.join_timeout = absl::Seconds(30);
  options.restart_backoff = absl::Seconds(1);
  return options;
}

std::vector<std::string> Names(const std::vector<GenerationMember>& members) {
  std::vector<std::string> names;
  for (const GenerationMember& member : members) names.push_back(member.node);
  return names;
}

// Every node joins (two ranks each); generation 0 starts on `members`.
void JoinFour(JobCoordinator& job, const std::vector<std::string>& members) {
  for (const char* node : {"a", "b", "c", "d"}) job.Joined(node, 2);
  EXPECT_THAT(Kinds(job.Poll(kT0)), testing::ElementsAre(Kind::kStart));
  EXPECT_EQ(Names(job.membership().Placed()), members);
  for (const std::string& node : members) job.Started(node, 0);
}

// Ends generation `generation` on `nodes` (stopped by the order) and
// starts the next after the backoff; returns its orders.
std::vector<Kind> EndAndRestart(JobCoordinator& job, int generation,
                                const std::vector<std::string>& nodes, absl::Time now) {
  for (const std::string& node : nodes) job.RanksEnded(node, generation, {{0, 143}}, {});
  std::vector<Kind> kinds = Kinds(job.Poll(now));
  if (!kinds.empty()) return kinds;
  return Kinds(job.Poll(now + absl::Seconds(1)));
}

TEST(ElasticJobTest, ALostWorkerAboveMinNodesRestartsOnTheRestWithoutARestart) {
  JobCoordinator job(Elastic(/*min_nodes=*/3), kT0);
  JoinFour(job, {"a", "b", "c", "d"});
  job.Lost("c", "no heartbeat for 3s", kT0 + absl::Seconds(10));
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(10))), testing::ElementsAre(Kind::kStop));
  EXPECT_THAT(EndAndRestart(job, 0, {"a", "b", "d"}, kT0 + absl::Seconds(10)),
              testing::ElementsAre(Kind::kStart));
  EXPECT_EQ(job.generation(), 1);
  EXPECT_THAT(Names(job.membership().Placed()), testing::ElementsAre("a", "b", "d"));
  EXPECT_EQ(job.restarts_used(), 0);
  EXPECT_EQ(job.membership().node_losses(), 1);
  EXPECT_EQ(job.restart_reason(), "lost node 'c': no heartbeat for 3s");
  ASSERT_EQ(job.membership().lost().size(), 1u);
  EXPECT_EQ(job.membership().lost()[0].node, "c");
  EXPECT_EQ(job.membership().lost()[0].at, kT0 + absl::Seconds(10));
  ASSERT_EQ(job.membership().generations().size(), 2u);
  EXPECT_THAT(job.membership().generations()[1].members, testing::ElementsAre("a", "b", "d"));
  EXPECT_FALSE(job.ended());
}

// The restart backoff is for failures: a generation that lost a member
// starts the next as soon as every node's ranks ended.
TEST(ElasticJobTest, AGenerationThatLostAMemberStartsTheNextWithoutTheBackoff) {
  JobCoordinator job(Elastic(/*min_nodes=*/3), kT0);
  JoinFour(job, {"a", "b", "c", "d"});
  absl::Time lost = kT0 + absl::Seconds(10);
  job.Lost("c", "no heartbeat for 3s", lost);
  EXPECT_THAT(Kinds(job.Poll(lost)), testing::ElementsAre(Kind::kStop));
  for (const char* node : {"a", "b", "d"}) job.RanksEnded(node, 0, {{0, 143}}, {});
  EXPECT_THAT(Kinds(job.Poll(lost)), testing::ElementsAre(Kind::kStart));
  EXPECT_EQ(job.generation(), 1);
}

TEST(ElasticJobTest, BelowMinNodesTheJobFailsNamingTheLostNodes) {
  JobCoordinator job(Elastic(/*min_nodes=*/3), kT0);
  JoinFour(job, {"a", "b", "c", "d"});
  job.Lost("c", "no heartbeat for 3s", kT0);
  job.Poll(kT0);
  ASSERT_THAT(EndAndRestart(job, 0, {"a", "b", "d"}, kT0), testing::ElementsAre(Kind::kStart));
  job.Lost("d", "its agent's connection closed", kT0 + absl::Seconds(5));
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(5))), testing::ElementsAre(Kind::kStop));
  EXPECT_THAT(EndAndRestart(job, 1, {"a", "b"}, kT0 + absl::Seconds(5)),
              testing::ElementsAre(Kind::kEnd));
  EXPECT_EQ(job.phase(), JobPhase::kFailed);
  EXPECT_EQ(job.exit_status(), 1);
  EXPECT_EQ(DescribeFailure(*job.failure()),
            "node 'd' failed: its agent's connection closed; 2 nodes left, fewer than "
            "min_nodes = 3 (lost: c, d)");
}

TEST(ElasticJobTest, ASpareTakesTheLostNodesPlaceAndTheWorldSizeStays) {
  JobCoordinator job(Elastic(/*min_nodes=*/0, {"d"}), kT0);
  JoinFour(job, {"a", "b", "c"});
  EXPECT_THAT(job.membership().Standby(), testing::ElementsAre("d"));
  job.Lost("b", "no heartbeat for 3s", kT0);
  EXPECT_THAT(Kinds(job.Poll(kT0)), testing::ElementsAre(Kind::kStop));
  EXPECT_THAT(EndAndRestart(job, 0, {"a", "c"}, kT0), testing::ElementsAre(Kind::kStart));
  // d in b's place: c keeps its node rank, and the job its size.
  EXPECT_THAT(Names(job.membership().Placed()), testing::ElementsAre("a", "d", "c"));
  EXPECT_TRUE(job.membership().Standby().empty());
}

TEST(ElasticJobTest, ALostSpareOnlyLeavesTheReserve) {
  JobCoordinator job(Elastic(/*min_nodes=*/0, {"d"}), kT0);
  JoinFour(job, {"a", "b", "c"});
  job.Lost("d", "no heartbeat for 3s", kT0);
  EXPECT_TRUE(job.Poll(kT0).empty());
  EXPECT_EQ(job.membership().node_losses(), 0);
  EXPECT_TRUE(job.membership().Standby().empty());
  // Without a spare, the job of three needs all three.
  job.Lost("b", "no heartbeat for 3s", kT0);
  job.Poll(kT0);
  EXPECT_THAT(EndAndRestart(job, 0, {"a", "c"}, kT0), testing::ElementsAre(Kind::kEnd));
  EXPECT_EQ(job.phase(), JobPhase::kFailed);
}

TEST(ElasticJobTest, MaxNodeLossesEndsAJobThatKeepsLosingNodes) {
  JobCoordinator::Options options = Elastic(/*min_nodes=*/2);
  options.elastic.max_node_losses = 1;
  JobCoordinator job(options, kT0);
  JoinFour(job, {"a", "b", "c", "d"});
  job.Lost("c", "no heartbeat for 3s", kT0);
  job.Poll(kT0);
  ASSERT_THAT(EndAndRestart(job, 0, {"a", "b", "d"}, kT0), testing::ElementsAre(Kind::kStart));
  job.Lost("d", "no heartbeat for 3s", kT0);
  job.Poll(kT0);
  EXPECT_THAT(EndAndRestart(job, 1, {"a", "b"}, kT0), testing::ElementsAre(Kind::kEnd));
  EXPECT_EQ(DescribeFailure(*job.failure()),
            "node 'd' failed: lost 2 nodes, more than max_node_losses = 1 (lost now: c, d)");
}

// A crash loop cannot hide behind node losses: a generation without a loss
// whose rank failed uses the restarts, and with none left the job fails.
TEST(ElasticJobTest, RankFailuresUseTheRestartsWhateverTheLosses) {
  JobCoordinator job(Elastic(/*min_nodes=*/2), kT0);
  JoinFour(job, {"a", "b", "c", "d"});
  job.Lost("c", "no heartbeat for 3s", kT0);
  job.Poll(kT0);
  ASSERT_THAT(EndAndRestart(job, 0, {"a", "b", "d"}, kT0), testing::ElementsAre(Kind::kStart));
  job.RanksEnded("b", 1, {{2, 3}}, {{2, 3}});
  EXPECT_THAT(Kinds(job.Poll(kT0)), testing::ElementsAre(Kind::kStop));
  EXPECT_THAT(EndAndRestart(job, 1, {"a", "d"}, kT0), testing::ElementsAre(Kind::kEnd));
  EXPECT_EQ(DescribeFailure(*job.failure()), "rank 2 on node 'b' failed with exit status 3");
  EXPECT_EQ(job.exit_status(), 3);
}

// Ranks that fail because a member died (a collective's peer gone) cost no
// restart: the loss explains them.
TEST(ElasticJobTest, FailuresInAGenerationThatLostAMemberCostNoRestart) {
  JobCoordinator job(Elastic(/*min_nodes=*/3), kT0);
  JoinFour(job, {"a", "b", "c", "d"});
  job.RanksEnded("a", 0, {{0, 1}}, {{0, 1}});
  EXPECT_THAT(Kinds(job.Poll(kT0)), testing::ElementsAre(Kind::kStop));
  job.Lost("c", "no heartbeat for 3s", kT0 + absl::Seconds(3));
  EXPECT_THAT(EndAndRestart(job, 0, {"b", "d"}, kT0 + absl::Seconds(3)),
              testing::ElementsAre(Kind::kStart));
  EXPECT_EQ(job.restarts_used(), 0);
  EXPECT_THAT(Names(job.membership().Placed()), testing::ElementsAre("a", "b", "d"));
}

TEST(ElasticJobTest, ANodeThatComesBackGrowsTheJobAtOnce) {
  JobCoordinator job(Elastic(/*min_nodes=*/3), kT0);
  JoinFour(job, {"a", "b", "c", "d"});
  job.Lost("d", "no heartbeat for 3s", kT0);
  job.Poll(kT0);
  ASSERT_THAT(EndAndRestart(job, 0, {"a", "b", "c"}, kT0), testing::ElementsAre(Kind::kStart));
  EXPECT_FALSE(job.MayJoin("c"));  // still connected: never twice
  EXPECT_TRUE(job.MayJoin("d"));
  job.Joined("d", 2);
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(20))), testing::ElementsAre(Kind::kStop));
  EXPECT_THAT(EndAndRestart(job, 1, {"a", "b", "c"}, kT0 + absl::Seconds(20)),
              testing::ElementsAre(Kind::kStart));
  EXPECT_EQ(job.generation(), 2);
  EXPECT_THAT(Names(job.membership().Placed()), testing::ElementsAre("a", "b", "c", "d"));
  EXPECT_EQ(job.restarts_used(), 0);
  EXPECT_EQ(job.restart_reason(), "node 'd' is back: growing the job to 4 nodes");
}

TEST(ElasticJobTest, WithRejoinAtTheNextFailureANodeBackWaitsForIt) {
  JobCoordinator::Options options = Elastic(/*min_nodes=*/3, {}, /*restarts=*/1);
  options.elastic.rejoin = "next-failure";
  JobCoordinator job(options, kT0);
  JoinFour(job, {"a", "b", "c", "d"});
  job.Lost("d", "no heartbeat for 3s", kT0);
  job.Poll(kT0);
  ASSERT_THAT(EndAndRestart(job, 0, {"a", "b", "c"}, kT0), testing::ElementsAre(Kind::kStart));
  job.Joined("d", 2);
  EXPECT_TRUE(job.Poll(kT0 + absl::Seconds(20)).empty());
  EXPECT_THAT(job.membership().Standby(), testing::ElementsAre("d"));
  job.RanksEnded("b", 1, {{2, 3}}, {{2, 3}});
  job.Poll(kT0 + absl::Seconds(21));
  EXPECT_THAT(EndAndRestart(job, 1, {"a", "c"}, kT0 + absl::Seconds(21)),
              testing::ElementsAre(Kind::kStart));
  EXPECT_THAT(Names(job.membership().Placed()), testing::ElementsAre("a", "b", "c", "d"));
  EXPECT_EQ(job.restarts_used(), 1);
}

TEST(ElasticJobTest, ANodeBackAtFullSizeIsASpare) {
  JobCoordinator job(Elastic(/*min_nodes=*/0, {"d"}), kT0);
  JoinFour(job, {"a", "b", "c"});
  job.Lost("b", "no heartbeat for 3s", kT0);
  job.Poll(kT0);
  ASSERT_THAT(EndAndRestart(job, 0, {"a", "c"}, kT0), testing::ElementsAre(Kind::kStart));
  job.Joined("b", 2);
  EXPECT_TRUE(job.Poll(kT0 + absl::Seconds(20)).empty());
  EXPECT_THAT(job.membership().Standby(), testing::ElementsAre("b"));
  // The next loss takes it in.
  job.Lost("c", "no heartbeat for 3s", kT0 + absl::Seconds(30));
  job.Poll(kT0 + absl::Seconds(30));
  EXPECT_THAT(EndAndRestart(job, 1, {"a", "d"}, kT0 + absl::Seconds(30)),
              testing::ElementsAre(Kind::kStart));
  EXPECT_THAT(Names(job.membership().Placed()), testing::ElementsAre("a", "d", "b"));
}

TEST(ElasticJobTest, ANodeOutOfReachAtTheStartIsLeftOut) {
  JobCoordinator job(Elastic(/*min_nodes=*/3), kT0);
  for (const char* node : {"a", "b", "c"}) job.Joined(node, 1);
  EXPECT_TRUE(job.Poll(kT0 + absl::Seconds(30)).empty());
  EXPECT_THAT(Kinds(job.Poll(kT0 + absl::Seconds(31))), testing::ElementsAre(Kind::kStart));
  EXPECT_THAT(Names(job.membership().Placed()), testing::ElementsAre("a", "b", "c"));
  ASSERT_EQ(job.membership().lost().size(), 1u);
  EXPECT_EQ(job.membership().lost()[0].node, "d");
  EXPECT_EQ(job.membership().lost()[0].reason,
            "its agent did not reach the coordinator within 30s");
}

}  // namespace
}  // namespace fleetplan
