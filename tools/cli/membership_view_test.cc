#include "tools/cli/membership_view.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;

NodeJobState LostOneKeptASpare() {
  NodeJobState chief;
  chief.node = "a";
  chief.coordinator = true;
  chief.generation = 1;
  chief.generations = {{0, absl::FromCivil(absl::CivilSecond(2026, 11, 26, 12, 0, 0),
                                            absl::UTCTimeZone()),
                        {"a", "b", "c"}},
                       {1, absl::FromCivil(absl::CivilSecond(2026, 11, 26, 12, 3, 9),
                                            absl::UTCTimeZone()),
                        {"a", "e", "c"}}};
  chief.lost = {{"b", absl::FromCivil(absl::CivilSecond(2026, 11, 26, 12, 3, 4),
                                      absl::UTCTimeZone()),
                 "no heartbeat for 10s"}};
  chief.spares = {"f"};
  chief.node_losses = 1;
  return chief;
}

TEST(MembershipViewTest, SaysWhoRunsEachGenerationWhoWasLostAndTheSpares) {
  EXPECT_THAT(MembershipLines(LostOneKeptASpare(), absl::UTCTimeZone()),
              ElementsAre("generation 1 since 12:03:09: a, e, c (3 nodes)",
                          "  generation 0 since 12:00:00: a, b, c (3 nodes)",
                          "lost b at 12:03:04 (no heartbeat for 10s)", "spares: f",
                          "node losses: 1; the chief 'a' runs the coordinator: losing it ends "
                          "the job"));
}

TEST(MembershipViewTest, JsonCarriesTheSame) {
  nlohmann::json json = MembershipJson(LostOneKeptASpare());
  EXPECT_EQ(json["generations"][1]["members"], nlohmann::json({"a", "e", "c"}));
  EXPECT_EQ(json["generations"][1]["started_at"], "2026-11-26T12:03:09.000Z");
  EXPECT_EQ(json["lost"][0]["node"], "b");
  EXPECT_EQ(json["lost"][0]["at"], "2026-11-26T12:03:04.000Z");
  EXPECT_EQ(json["lost"][0]["reason"], "no heartbeat for 10s");
  EXPECT_EQ(json["spares"], nlohmann::json({"f"}));
  EXPECT_EQ(json["node_losses"], 1);
  EXPECT_EQ(json["chief"], "a");
  EXPECT_EQ(json["chief_loss_ends_job"], true);
}

}  // namespace
}  // namespace fleetplan
