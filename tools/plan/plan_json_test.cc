#include "tools/plan/plan_json.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/plan/compile.h"
#include "tools/plan/test_specs.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

TEST(PlanJsonTest, SameSpecGivesTheSameBytes) {
  FP_ASSERT_OK_AND_ASSIGN(Plan a, CompilePlan(TwoByTwoSpec(), {"s"}));
  FP_ASSERT_OK_AND_ASSIGN(Plan b, CompilePlan(TwoByTwoSpec(), {"s"}));
  EXPECT_EQ(RenderPlanJson(a), RenderPlanJson(b));
  ClusterSpec changed = TwoByTwoSpec();
  changed.job.restarts = 1;
  FP_ASSERT_OK_AND_ASSIGN(Plan c, CompilePlan(changed, {"s"}));
  EXPECT_NE(RenderPlanJson(a), RenderPlanJson(c));
}

TEST(PlanJsonTest, Layout) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(TwoByTwoSpec(), {"src"}));
  nlohmann::json json = nlohmann::json::parse(RenderPlanJson(plan));
  EXPECT_EQ(json["format"], "fleetplan-plan/1");
  EXPECT_EQ(json["name"], "resnet-2x2");
  EXPECT_EQ(json["spec"], "/home/me/fleetplan/cluster_specs/lambda.toml");
  EXPECT_EQ(json["spec_hash"], plan.spec_hash);
  EXPECT_EQ(json["source_hash"], "src");
  EXPECT_EQ(json["hash"], plan.hash);
  ASSERT_EQ(json["phases"].size(), 6u);
  EXPECT_EQ(json["phases"][0]["phase"], "build");
  EXPECT_EQ(json["phases"][5]["phase"], "launch");
  const nlohmann::json& sync = json["phases"][2]["steps"][1];
  EXPECT_EQ(sync["node"], "head");
  EXPECT_EQ(sync["kind"], "sync-tree");
  EXPECT_EQ(sync["inputs"]["source_hash"], "src");
  EXPECT_EQ(sync["inputs"]["exclude"], ".git,bazel-*,*.pt");
  EXPECT_EQ(sync["hash"], plan.phases[2].steps[1].hash);
  const nlohmann::json& env = json["phases"][3]["steps"][0];
  EXPECT_EQ(env["path"], plan.phases[3].steps[0].path);
  EXPECT_EQ(env["content"], plan.phases[3].steps[0].content);
  ASSERT_EQ(json["ranks"].size(), 4u);
  const nlohmann::json& rank = json["ranks"][3];
  EXPECT_EQ(rank["rank"], 3);
  EXPECT_EQ(rank["local_rank"], 1);
  EXPECT_EQ(rank["node"], "104.171.200.62");
  EXPECT_EQ(rank["node_name"], "head");
  EXPECT_EQ(rank["env"]["RANK"], "3");
  EXPECT_EQ(rank["env"]["MASTER_ADDR"], "10.0.0.5");
  // "auto" is known only on the node, once preflight has looked.
  EXPECT_FALSE(rank["env"].contains("NCCL_SOCKET_IFNAME"));
  // The chief's preflight serves the others'; the flag appears only there.
  const nlohmann::json& preflight = json["phases"][4]["steps"];
  EXPECT_FALSE(preflight[0].contains("serves_phase"));
  EXPECT_EQ(preflight[1]["serves_phase"], true);
}

TEST(PlanJsonTest, RanksShowTheirLaunchersVariablesAndArguments) {
  ClusterSpec spec = ThreeNodeSpec();
  spec.job.program = "/usr/bin/python3";
  spec.job.args = {"main.py", "--backend=gloo"};
  spec.job.restarts = 2;
  FP_ASSERT_OK_AND_ASSIGN(Plan torchrun, CompilePlan(spec, {}));
  nlohmann::json rank = nlohmann::json::parse(RenderPlanJson(torchrun))["ranks"][2];
  EXPECT_EQ(rank["argv"], nlohmann::json({"/usr/bin/python3", "main.py", "--backend=gloo"}));
  // Every variable of torchrun's worker_env, with torchrun's values.
  nlohmann::json torchrun_env = {
      {"GROUP_RANK", "1"},
      {"GROUP_WORLD_SIZE", "3"},
      {"LOCAL_RANK", "1"},
      {"LOCAL_WORLD_SIZE", "2"},
      {"MASTER_ADDR", "10.1.0.1"},
      {"MASTER_PORT", "23456"},
      {"NCCL_ASYNC_ERROR_HANDLING", "1"},
      {"RANK", "2"},
      {"ROLE_NAME", "default"},
      {"ROLE_RANK", "2"},
      {"ROLE_WORLD_SIZE", "6"},
      {"TORCHELASTIC_ERROR_FILE",
       "/home/ubuntu/project/.fleetplan/nodes/n1/logs/<run-id>/rank-2.error-0.json"},
      {"TORCHELASTIC_MAX_RESTARTS", "2"},
      {"TORCHELASTIC_RESTART_COUNT", "0"},
      {"TORCHELASTIC_RUN_ID", "<run-id>"},
      {"TORCHELASTIC_USE_AGENT_STORE", "False"},
      {"WORLD_SIZE", "6"}};
  for (const auto& [name, value] : torchrun_env.items()) {
    EXPECT_EQ(rank["env"][name], value) << name;
  }

  spec.job.launcher = {Launcher::kDistributedLaunch, "--local_rank"};
  FP_ASSERT_OK_AND_ASSIGN(Plan launch, CompilePlan(spec, {}));
  rank = nlohmann::json::parse(RenderPlanJson(launch))["ranks"][2];
  EXPECT_EQ(rank["argv"], nlohmann::json({"/usr/bin/python3", "main.py", "--local_rank=1",
                                          "--backend=gloo"}));
  EXPECT_THAT(launch.phases[5].steps[1].command,
              HasSubstr("--launcher=distributed-launch --local-rank-arg=--local_rank -- "
                        "/usr/bin/python3 main.py --backend=gloo"));

  spec.job.launcher = {Launcher::kMpirun, ""};
  spec.env = {{"RANK", "kept: not mpirun's"}, {"OMPI_COMM_WORLD_RANK", "dropped"}};
  FP_ASSERT_OK_AND_ASSIGN(Plan mpirun, CompilePlan(spec, {}));
  rank = nlohmann::json::parse(RenderPlanJson(mpirun))["ranks"][2];
  EXPECT_EQ(rank["argv"], nlohmann::json({"/usr/bin/python3", "main.py", "--backend=gloo"}));
  nlohmann::json expected = {{"MASTER_ADDR", "10.1.0.1"},
                             {"MASTER_PORT", "23456"},
                             {"NCCL_ASYNC_ERROR_HANDLING", "1"},
                             {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                             {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                             {"OMPI_COMM_WORLD_NODE_RANK", "1"},
                             {"OMPI_COMM_WORLD_RANK", "2"},
                             {"OMPI_COMM_WORLD_SIZE", "6"},
                             {"OMPI_UNIVERSE_SIZE", "6"},
                             {"OMP_NUM_THREADS", "1"},
                             {"RANK", "kept: not mpirun's"},
                             {"TORCHELASTIC_ERROR_FILE",
                              "/home/ubuntu/project/.fleetplan/nodes/n1/logs/<run-id>/"
                              "rank-2.error-0.json"},
                             {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"}};
  EXPECT_EQ(rank["env"], expected);
  EXPECT_THAT(mpirun.phases[3].steps[1].content, HasSubstr("export OMPI_COMM_WORLD_SIZE=6\n"));
  EXPECT_NE(mpirun.hash, launch.hash);
}

std::string DumpOfPlanToJson(const Plan& plan) {
  return PlanToJson(plan).dump(2, ' ', /*ensure_ascii=*/false,
                               nlohmann::json::error_handler_t::replace) +
         "\n";
}

// RenderPlanJson writes JSON itself for speed; it must match the document.
TEST(PlanJsonTest, RenderMatchesTheJsonDocument) {
  ClusterSpec spec = TwoByTwoSpec();
  spec.env.emplace_back("HOSTILE", "\"q\" \\ \b\f\n\r\t\x01\x1f\x7f /");
  spec.env.emplace_back("UTF8", "naïve ✓ 日本 \xf0\x9f\x98\x80");
  spec.env.emplace_back("BAD", "\xff\xfe x \xc3");
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec, {"src"}));
  EXPECT_EQ(RenderPlanJson(plan), DumpOfPlanToJson(plan));
}

TEST(PlanJsonTest, RenderMatchesForHandMadePlans) {
  Plan plan;
  EXPECT_EQ(RenderPlanJson(plan), DumpOfPlanToJson(plan));
  plan.phases.push_back(Phase{PhaseKind::kSync, {}});
  Step step;
  step.node = "n";
  step.kind = StepKind::kLaunchAgent;
  step.inputs = {{"b", "1"}, {"a", "2"}, {"b", "3"}};  // unsorted, repeated
  plan.phases.push_back(Phase{PhaseKind::kLaunch, {step, step}});
  step.serves_phase = true;
  plan.phases.push_back(Phase{PhaseKind::kPreflight, {step}, "f() { :; }\n\"q\"\n"});
  RankEnv rank;
  rank.env = {{"Z", "z"}, {"A", "a"}};
  plan.ranks = {rank, RankEnv()};
  EXPECT_EQ(RenderPlanJson(plan), DumpOfPlanToJson(plan));
}

TEST(PlanJsonTest, EndsInANewlineAndSurvivesBadUtf8) {
  ClusterSpec spec = TwoByTwoSpec();
  spec.env.emplace_back("BYTES", "\xff\xfe");
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec, {}));
  std::string json = RenderPlanJson(plan);
  EXPECT_EQ(json.back(), '\n');
  EXPECT_THAT(json, HasSubstr("\"BYTES\": \"\xef\xbf\xbd\xef\xbf\xbd\""));
}

TEST(ParseSavedPlanTest, ReadsBackWhatWasRendered) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(TwoByTwoSpec(), {"src"}));
  FP_ASSERT_OK_AND_ASSIGN(SavedPlanRef ref, ParseSavedPlan(RenderPlanJson(plan)));
  EXPECT_EQ(ref.spec_name, plan.spec_name);
  EXPECT_EQ(ref.spec_path, plan.spec_path);
  EXPECT_EQ(ref.spec_hash, plan.spec_hash);
  EXPECT_EQ(ref.source_hash, "src");
  EXPECT_EQ(ref.hash, plan.hash);
}

TEST(ParseSavedPlanTest, RejectsFilesThatAreNotPlans) {
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(TwoByTwoSpec(), {}));
  nlohmann::json good = PlanToJson(plan);
  auto without = [&](const char* key) {
    nlohmann::json copy = good;
    copy.erase(key);
    return copy.dump();
  };
  auto with = [&](const char* key, nlohmann::json value) {
    nlohmann::json copy = good;
    copy[key] = std::move(value);
    return copy.dump();
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"name = \"x\"\n", "not valid JSON"},
      {"", "not valid JSON"},
      {"[1, 2]", "not a JSON object"},
      {"{}", "not a fleetplan plan"},
      {with("format", "fleetplan-plan/2"), "not a fleetplan plan"},
      {without("phases"), "no \"phases\" array"},
      {without("spec"), "no string field \"spec\""},
      {with("hash", 42), "no string field \"hash\""},
      {with("spec_hash", "XYZ"), "\"spec_hash\" is not a digest"},
      {with("hash", "0123456789ABCDEF0123456789ABCDEF"), "\"hash\" is not a digest"},
  };
  for (const auto& [text, message] : cases) {
    EXPECT_THAT(ParseSavedPlan(text),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(message)))
        << text.substr(0, 80);
  }
}

}  // namespace
}  // namespace fleetplan
