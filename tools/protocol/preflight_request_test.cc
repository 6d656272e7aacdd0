#include "tools/protocol/preflight_request.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

TEST(PreflightRequestTest, RoundTripsThroughJson) {
  PreflightRequest request;
  request.check_only = true;
  request.workdir = "/w/it's \"q\"";
  request.state_dir = "/w/.fleetplan/nodes/a";
  request.sync_bytes = uint64_t{1} << 60;
  request.manifest = "/w/.fleetplan/nodes/a/manifest";
  request.listen_for = 3;
  request.chief_address = "10.0.0.1";
  request.master_port = 29500;
  request.supervisor_port = 29501;
  request.connect_timeout = absl::Seconds(10);
  request.nccl_address = "node-a";
  request.nccl_env_file = "/w/.fleetplan/nodes/a/preflight.env";
  request.conda = "torch";
  request.conda_sh = "/opt/conda/etc/profile.d/conda.sh";
  request.gpus = {0, 3};
  request.program = "/w/.fleetplan/bin/train";
  FP_ASSERT_OK_AND_ASSIGN(PreflightRequest back,
                          PreflightRequestFromJson(PreflightRequestToJson(request)));
  EXPECT_TRUE(back.check_only);
  EXPECT_EQ(back.workdir, request.workdir);
  EXPECT_EQ(back.sync_bytes, request.sync_bytes);
  EXPECT_EQ(back.listen_for, 3);
  EXPECT_EQ(back.supervisor_port, 29501);
  EXPECT_EQ(back.connect_timeout, absl::Seconds(10));
  EXPECT_EQ(back.nccl_env_file, request.nccl_env_file);
  EXPECT_EQ(back.conda_sh, request.conda_sh);
  EXPECT_THAT(back.gpus, testing::ElementsAre(0, 3));
  EXPECT_EQ(back.program, request.program);
}

TEST(PreflightRequestTest, AWrongFieldIsNamed) {
  EXPECT_THAT(PreflightRequestFromJson("[]"),
              StatusIs(absl::StatusCode::kInvalidArgument, "preflight request: not a JSON object"));
  EXPECT_THAT(PreflightRequestFromJson("{\"mode\": \"apply\"}"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "preflight request: \"workdir\" is missing"));
  EXPECT_THAT(PreflightRequestFromJson("{\"mode\": \"later\"}"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "preflight request: \"mode\" is neither \"apply\" nor \"check\""));
}

}  // namespace
}  // namespace fleetplan
