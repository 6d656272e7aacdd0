// Elastic jobs end to end over ssh: four sshd nodes of the test bed, one
// rank each of tests/testdata/generation_rank.sh (it says its RANK,
// WORLD_SIZE and TORCHELASTIC_RESTART_COUNT, then runs until stopped), a
// heartbeat timeout of 3 s, and a node cut off its network with `docker
// network disconnect` mid-run, then reconnected. One case runs the real
// trainer (tests/testdata/elastic_train.sh) instead and loses a node
// mid-epoch.

#include <unistd.h>

#include <string>
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
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr int kNodes = 4;
constexpr char kWorkdir[] = "/work/elastic";
constexpr absl::Duration kHeartbeat = absl::Seconds(3);
// A rank's command line (the agent's own names the program too).
constexpr char kRankProcess[] = "/bin/sh /work/elastic/generation_rank.sh";

class SshElasticTest : public SshTestbedTest {
 protected:
  static void SetUpTestSuite() { StartNodes(kNodes, "fp-elastic"); }
  static void TearDownTestSuite() { StopNodes(); }

  void SetUp() override {
    ASSERT_TRUE(ready()) << "the test bed did not start";
    nodes_ = &Nodes();
    dir_ = MakeTempDir();
    ASSERT_THAT(WriteKnownHosts(dir_ + "/known_hosts"), IsOk());
    for (const char* file : {"generation_rank.sh", "elastic_train.sh"}) {
      ASSERT_THAT(CopyFileAtomic(Runfile(absl::StrCat("tests/testdata/", file)),
                                 absl::StrCat(dir_, "/src/", file), 0755),
                  IsOk());
    }
    absl::StatusOr<std::string> network = RunScript(absl::StrCat(
        "docker inspect -f '{{range $k, $v := .NetworkSettings.Networks}}{{$k}}{{end}}' ",
        Node(0)));
    ASSERT_THAT(network, IsOk());
    network_ = *network;
  }

  void TearDown() override {
    for (int i = 0; i < kNodes; ++i) Reconnect(i);
    if (!spec_.empty()) Tool({"stop", spec_});
  }

  const std::string& Node(int i) const { return (*nodes_)[i].name; }

  // Four nodes, the chief first; `job_keys` added to [job], `spare` the
  // index of a spare node (-1: none).
  std::string WriteSpec(const std::string& job_keys, int spare = -1,
                        const std::string& program = "./generation_rank.sh") {
    std::string text = absl::StrCat("name = \"elastic\"\n[defaults]\ntransport = \"ssh\"\n",
                                    "workdir = \"", kWorkdir, "\"\nssh = \"bed\"\n");
    for (int i = 0; i < kNodes; ++i) {
      absl::StrAppend(&text, "[[nodes]]\nname = \"", Node(i), "\"\naddress = \"",
                      (*nodes_)[i].ip, "\"\n", i == 0 ? "chief = true\n" : "",
                      i == spare ? "spare = true\n" : "");
    }
    absl::StrAppend(&text, "[ssh.bed]\nuser = \"root\"\nkey_file = ",
                    TomlString((*nodes_)[0].key_file),
                    "\nknown_hosts = ", TomlString(dir_ + "/known_hosts"), "\n",
                    "[sync]\nsource = \"src\"\n[job]\nprogram = ", TomlString(program), "\n",
                    "heartbeat_timeout = \"3s\"\n", job_keys);
    spec_ = dir_ + "/cluster.toml";
    EXPECT_THAT(WriteFileAtomic(spec_, text, 0644), IsOk());
    return spec_;
  }

  ToolResult Tool(std::vector<std::string> args, absl::Duration timeout = absl::Seconds(60)) {
    args[0] = "tools/fleetplan-" + args[0];
    return RunTool(args, timeout, {{"XDG_RUNTIME_DIR", dir_}});
  }

  void Disconnect(int i) {
    ASSERT_THAT(RunScript(absl::StrCat("docker network disconnect ", network_, " ", Node(i))),
                IsOk());
    cut_off_.push_back(i);
  }

  // Back on the network, at the address it had (docker gives the lowest
  // free one, which its leaving freed).
  void Reconnect(int i) {
    for (auto it = cut_off_.begin(); it != cut_off_.end(); ++it) {
      if (*it != i) continue;
      cut_off_.erase(it);
      EXPECT_THAT(RunScript(absl::StrCat("docker network connect ", network_, " ", Node(i))),
                  IsOk());
      return;
    }
  }

  // The chief's job.json, read in its container (a `status` would wait on
  // the node cut off), parsed; null when unreadable.
  nlohmann::json ChiefState() {
    absl::StatusOr<std::string> text = ContainerExec(
        Node(0), absl::StrCat("cat ", kWorkdir, "/.fleetplan/nodes/", Node(0), "/logs/job.json"));
    if (!text.ok()) return nlohmann::json();
    nlohmann::json json = nlohmann::json::parse(*text, nullptr, false);
    return json.is_object() ? json : nlohmann::json();
  }

  // The chief's state once the job's latest generation is `generation`
  // (or it ended), within `timeout`, looking every `poll` (each look is a
  // docker exec, which costs the ranks CPU time while they train).
  nlohmann::json AwaitGeneration(int generation, absl::Duration timeout,
                                 absl::Duration poll = absl::Milliseconds(200)) {
    absl::Time deadline = absl::Now() + timeout;
    nlohmann::json state;
    while (absl::Now() < deadline) {
      state = ChiefState();
      if (state.is_object() && !state["generations"].empty() &&
          state["generations"].back()["generation"] == generation) {
        return state;
      }
      std::string phase = state.is_object() ? state.value("state", "") : "";
      if (phase != "" && phase != "starting" && phase != "running") return state;
      absl::SleepFor(poll);
    }
    return state;
  }

  // Cuts node 2 off: within the heartbeat timeout and a few seconds the
  // job runs on nodes 0, 1 and 3, as `state` (the chief's) says.
  void CutOffNodeTwo(nlohmann::json* state) {
    absl::Time cut = absl::Now();
    ASSERT_NO_FATAL_FAILURE(Disconnect(2));
    *state = AwaitGeneration(1, kHeartbeat + absl::Seconds(15));
    absl::Duration took = absl::Now() - cut;
    ASSERT_THAT(Members(*state), testing::ElementsAre(Node(0), Node(1), Node(3)))
        << state->dump();
    EXPECT_LT(took, kHeartbeat + absl::Seconds(8));
  }

  // The chief's state once the job ended (or after `timeout`).
  nlohmann::json AwaitEnd(absl::Duration timeout) {
    return AwaitGeneration(-1, timeout, absl::Seconds(1));
  }

  // What node `i`'s ranks said in the latest run, every generation.
  std::string RankLogs(int i) {
    return ContainerExec(Node(i), absl::StrCat("cat ", kWorkdir, "/.fleetplan/nodes/", Node(i),
                                               "/logs/latest/rank-*.log"))
        .value_or("");
  }

  // Node `i`'s rank logs once they hold `text` (or after `timeout`).
  std::string AwaitRankLog(int i, const std::string& text,
                           absl::Duration timeout = absl::Seconds(10),
                           absl::Duration poll = absl::Milliseconds(300)) {
    absl::Time deadline = absl::Now() + timeout;
    std::string logs = RankLogs(i);
    while (absl::Now() < deadline && logs.find(text) == std::string::npos) {
      absl::SleepFor(poll);
      logs = RankLogs(i);
    }
    return logs;
  }

  // Every rank of `members` (node indexes, in rank order) said it is in a
  // world of their number, at restart count `restart`.
  void ExpectEveryRankSees(const std::vector<int>& members, int restart) {
    for (size_t rank = 0; rank < members.size(); ++rank) {
      std::string want = absl::StrCat("rank=", rank, " world=", members.size(),
                                      " restart=", restart, " group=", rank, "/", members.size());
      EXPECT_THAT(AwaitRankLog(members[rank], want), HasSubstr(want)) << Node(members[rank]);
    }
  }

  static std::vector<std::string> Members(const nlohmann::json& state) {
    if (!state.is_object() || !state.contains("generations") || state["generations"].empty()) {
      return {};
    }
    return state["generations"].back()["members"].get<std::vector<std::string>>();
  }

  // Nothing of the job (ranks whose command line holds `rank_text`) on
  // any node.
  void ExpectNothingLeft(const std::string& rank_text = "generation_rank") {
    for (int i = 0; i < kNodes; ++i) {
      EXPECT_THAT(ContainerProcessesMentioningAny(Node(i), {rank_text, "fleetplan-agent launch"}),
                  IsEmpty())
          << Node(i);
    }
  }

  const std::vector<TestbedNode>* nodes_ = nullptr;
  std::string dir_, spec_, network_;
  std::vector<int> cut_off_;
};

// min_nodes = 3 of 4: a worker cut off goes, the job runs on three within
// the heartbeat timeout and a few seconds, the cut-off node stops its own
// ranks, and once reconnected it rejoins as a fourth again.
TEST_F(SshElasticTest, AJobGoesOnWithoutACutOffNodeAndTakesItBack) {
  ToolResult apply = Tool({"apply", "--detach", WriteSpec("min_nodes = 3\n")},
                          absl::Seconds(120));
  ASSERT_EQ(apply.status, 0) << apply.output;
  nlohmann::json status = AwaitGeneration(0, absl::Seconds(20));
  ASSERT_THAT(Members(status), testing::ElementsAre(Node(0), Node(1), Node(2), Node(3)))
      << status.dump();

  // Its rank runs, as the check below would see it.
  ASSERT_THAT(ContainerProcessesMentioning(Node(2), kRankProcess, absl::ZeroDuration()),
              Not(IsEmpty()));
  ASSERT_NO_FATAL_FAILURE(CutOffNodeTwo(&status));
  EXPECT_EQ(status["state"], "running");
  EXPECT_EQ(status["lost"][0]["node"], Node(2));
  EXPECT_EQ(status["restarts_used"], 0);
  EXPECT_EQ(status["node_losses"], 1);
  // Every rank of the three sees the new world and the restart count.
  ExpectEveryRankSees({0, 1, 3}, 1);
  // The node cut off stopped its own ranks.
  EXPECT_THAT(ContainerProcessesMentioning(Node(2), kRankProcess, kHeartbeat), IsEmpty());
  // While it is out of reach, status says what the others know, the node
  // marked (its connect timeout is 5 s; the bound here means "hung").
  ToolResult cut_json = Tool({"status", "--json", spec_}, absl::Seconds(90));
  EXPECT_EQ(cut_json.status, 0) << cut_json.output;
  nlohmann::json cut = nlohmann::json::parse(cut_json.output, nullptr, false);
  ASSERT_TRUE(cut.is_object()) << cut_json.output;
  EXPECT_EQ(cut["state"], "running") << cut_json.output;
  EXPECT_EQ(cut["nodes"][2]["state"], "unreachable") << cut_json.output;
  EXPECT_FALSE(cut["nodes"][2].value("error", "").empty()) << cut_json.output;
  EXPECT_EQ(cut["nodes"][1]["state"], "running") << cut_json.output;
  ToolResult cut_text = Tool({"status", spec_}, absl::Seconds(90));
  EXPECT_EQ(cut_text.status, 0) << cut_text.output;
  EXPECT_THAT(cut_text.output,
              testing::ContainsRegex(absl::StrCat("\n", Node(2), " +unreachable ")));
  ToolResult cut_logs = Tool({"logs", "--tail=1", spec_}, absl::Seconds(90));
  EXPECT_EQ(cut_logs.status, 0) << cut_logs.output;
  EXPECT_THAT(cut_logs.output,
              HasSubstr(absl::StrCat("logs: node '", Node(2), "' is unreachable: ")));

  Reconnect(2);
  status = AwaitGeneration(2, absl::Seconds(30));
  EXPECT_THAT(Members(status), testing::ElementsAre(Node(0), Node(1), Node(3), Node(2)))
      << status.dump();
  EXPECT_THAT(AwaitRankLog(2, "rank=3 world=4 restart=2 group=3/4"),
              HasSubstr("rank=3 world=4 restart=2 group=3/4"));
  // Every node in reach again: `status` says who was lost, and when.
  ToolResult human = Tool({"status", spec_});
  EXPECT_EQ(human.status, 0) << human.output;
  EXPECT_THAT(human.output, HasSubstr(absl::StrCat("generation 2 since ")));
  EXPECT_THAT(human.output, HasSubstr(absl::StrCat("lost ", Node(2), " at ")));
  EXPECT_THAT(human.output, HasSubstr("losing it ends the job"));
  ToolResult json = Tool({"status", "--json", spec_});
  nlohmann::json parsed = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << json.output;
  EXPECT_EQ(parsed["membership"]["lost"][0]["node"], Node(2)) << json.output;
  EXPECT_EQ(parsed["membership"]["generations"].back()["members"].size(), 4u) << json.output;

  EXPECT_EQ(Tool({"stop", spec_}).status, 0);
  spec_.clear();
  ExpectNothingLeft();
}

// A spare takes a lost node's place and the world size stays; with the
// spare spent, one more loss leaves fewer than min_nodes (every node that
// is no spare): the job fails naming the lost node.
TEST_F(SshElasticTest, ASpareTakesALostNodesPlaceThenTheJobFailsBelowMinNodes) {
  ToolResult apply = Tool({"apply", "--detach", WriteSpec("", /*spare=*/3)},
                          absl::Seconds(120));
  ASSERT_EQ(apply.status, 0) << apply.output;
  nlohmann::json status = AwaitGeneration(0, absl::Seconds(20));
  ASSERT_THAT(Members(status), testing::ElementsAre(Node(0), Node(1), Node(2)))
      << status.dump();
  EXPECT_EQ(status["spares"], nlohmann::json({Node(3)}));
  EXPECT_THAT(RankLogs(3), IsEmpty());

  ASSERT_NO_FATAL_FAILURE(Disconnect(1));
  status = AwaitGeneration(1, kHeartbeat + absl::Seconds(15));
  ASSERT_THAT(Members(status), testing::ElementsAre(Node(0), Node(3), Node(2)))
      << status.dump();
  EXPECT_THAT(AwaitRankLog(3, "rank=1 world=3 restart=1 group=1/3"),
              HasSubstr("rank=1 world=3 restart=1 group=1/3"));

  ASSERT_NO_FATAL_FAILURE(Disconnect(2));
  status = AwaitGeneration(2, kHeartbeat + absl::Seconds(15));
  EXPECT_EQ(status["state"], "failed") << status.dump();
  EXPECT_EQ(status["failure"]["node"], Node(2)) << status.dump();
  EXPECT_THAT(status["failure"].value("reason", ""),
              HasSubstr(absl::StrCat("fewer than min_nodes = 3 (lost: ", Node(1), ", ", Node(2),
                                     ")")))
      << status.dump();
  for (int i : {1, 2}) {
    EXPECT_THAT(ContainerProcessesMentioning(Node(i), kRankProcess, kHeartbeat), IsEmpty())
        << Node(i);
  }
  Reconnect(1);
  Reconnect(2);
  EXPECT_EQ(Tool({"stop", spec_}).status, 0);
  spec_.clear();
  ExpectNothingLeft();
}

// The real trainer, min_nodes = 3 of 4, its checkpoints on each node's own
// disk (rank 0, on the chief, alone writes and reads them): a worker cut
// off after the four wrote a checkpoint goes, and within the heartbeat
// timeout and a few seconds the job trains on three. Every rank sees the
// new world and restart count, rank 0 resumes at the last checkpoint the
// four wrote, and the epoch ends with the accuracy a run that lost no node
// reaches (TrainsTheTrainerAcrossThreeNodes' floor).
TEST_F(SshElasticTest, TheTrainerLosesAWorkerMidEpochAndFinishesOnThreeFromItsCheckpoint) {
  ASSERT_THAT(CopyFileAtomic(Runfile("trainer/train"), dir_ + "/src/train", 0755), IsOk());
  const std::string checkpoints = absl::StrCat("/tmp/elastic-checkpoints-", getpid());
  std::string job = absl::StrCat(
      "min_nodes = 3\nargs = [\"--backend=gloo\", \"--dataset=fashion-mnist\", \"--epochs=1\", "
      "\"--log-every=20\", \"--checkpoint-every=20\", \"--checkpoint-dir=",
      checkpoints, "\"]\n");
  ToolResult apply = Tool({"apply", "--detach", WriteSpec(job, -1, "./elastic_train.sh")},
                          absl::Seconds(120));
  ASSERT_EQ(apply.status, 0) << apply.output;
  nlohmann::json status = AwaitGeneration(0, absl::Seconds(20));
  ASSERT_THAT(Members(status), testing::ElementsAre(Node(0), Node(1), Node(2), Node(3)))
      << status.dump();

  // A deadline, not a pause: four ranks share this machine's cores with
  // whatever else runs, and the first checkpoint comes after 20 steps.
  std::string chief_log =
      AwaitRankLog(0, "\"event\":\"checkpoint\"", absl::Minutes(3), absl::Seconds(1));
  ASSERT_THAT(TrainerEvents(chief_log, "checkpoint"), Not(IsEmpty())) << chief_log;
  ASSERT_NO_FATAL_FAILURE(CutOffNodeTwo(&status));
  ExpectEveryRankSees({0, 1, 3}, 1);

  status = AwaitEnd(absl::Minutes(3));
  EXPECT_EQ(status["state"], "succeeded") << status.dump();
  EXPECT_EQ(status["lost"][0]["node"], Node(2)) << status.dump();
  chief_log = RankLogs(0);
  size_t loss = chief_log.find("--- generation 1 on 3 nodes");
  ASSERT_NE(loss, std::string::npos) << chief_log;
  std::vector<nlohmann::json> written = TrainerEvents(chief_log.substr(0, loss), "checkpoint");
  std::vector<nlohmann::json> resumed = TrainerEvents(chief_log.substr(loss), "resume");
  std::vector<nlohmann::json> epochs = TrainerEvents(chief_log.substr(loss), "epoch");
  ASSERT_FALSE(written.empty()) << chief_log;
  ASSERT_EQ(resumed.size(), 1u) << chief_log;
  EXPECT_EQ(resumed[0]["world_size"], 3) << chief_log;
  EXPECT_EQ(resumed[0]["checkpoint_world_size"], 4) << chief_log;
  EXPECT_EQ(resumed[0]["checkpoint_step"], written.back()["step"]) << chief_log;
  EXPECT_GT(resumed[0].value("epoch_position", 0), 0) << chief_log;
  EXPECT_THAT(TrainerEvents(chief_log.substr(0, loss), "epoch"), IsEmpty()) << chief_log;
  ASSERT_EQ(epochs.size(), 1u) << chief_log;
  EXPECT_EQ(epochs[0]["world_size"], 3) << chief_log;
  EXPECT_GE(epochs[0].value("test_accuracy", 0.0), 0.86) << chief_log;
  // Node-local: the chief holds the checkpoint, no other node one.
  std::string file = checkpoints + "/checkpoint.pt";
  EXPECT_THAT(ContainerExec(Node(0), "test -f " + file), IsOk());
  for (int i : {1, 2, 3}) {
    EXPECT_THAT(ContainerExec(Node(i), "test ! -e " + file), IsOk()) << Node(i);
  }

  Reconnect(2);
  EXPECT_EQ(Tool({"stop", spec_}).status, 0);
  spec_.clear();
  ExpectNothingLeft(checkpoints);
  EXPECT_THAT(ContainerExec(Node(0), "rm -rf " + checkpoints), IsOk());
}

}  // namespace
}  // namespace fleetplan
