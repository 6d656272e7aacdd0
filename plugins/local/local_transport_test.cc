#include "plugins/local/local_transport.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

TEST(LocalTransportTest, RegisteredAsLocalAndUnknownNamesSuggestIt) {
  FP_ASSERT_OK_AND_ASSIGN(Transport * transport,
                          TransportRegistry::Global().Find("local"));
  EXPECT_NE(dynamic_cast<LocalTransport*>(transport), nullptr);
  EXPECT_THAT(TransportRegistry::Global().Find("locl"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("did you mean `local`")));
}

TEST(LocalTransportTest, ValidateNodeWantsAnAbsoluteWorkdir) {
  LocalTransport transport;
  ClusterSpec spec;
  NodeSpec node;
  node.name = "n1";
  node.address = "anything.example";
  node.workdir = "/srv/project";
  EXPECT_THAT(transport.ValidateNode(spec, node), IsOk());
  node.workdir = "project";
  EXPECT_THAT(transport.ValidateNode(spec, node),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"n1\"")));
}

}  // namespace
}  // namespace fleetplan
