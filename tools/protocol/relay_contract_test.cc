#include "tools/protocol/relay_contract.h"

#include <cstddef>

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

// Every node's parent comes before it (it is set up first and exists when
// the node connects), and every parent serves at most kRelayFanOut nodes.
TEST(RelayContractTest, ParentsComeFirstAndServeAtMostTheFanOut) {
  constexpr size_t kNodes = 64;
  size_t children[kNodes] = {};
  for (size_t position = 1; position < kNodes; ++position) {
    const size_t parent = RelayParent(position);
    ASSERT_LT(parent, position) << position;
    ++children[parent];
  }
  for (size_t position = 0; position < kNodes; ++position) {
    EXPECT_LE(children[position], kRelayFanOut) << position;
  }
}

TEST(RelayContractTest, TheChainFollowsTheOrderApplyLists) {
  EXPECT_EQ(RelayParent(0), 0u);
  EXPECT_EQ(RelayParent(1), 0u);
  if (kRelayFanOut == 1) {
    EXPECT_EQ(RelayParent(2), 1u);
    EXPECT_EQ(RelayParent(7), 6u);
  }
}

}  // namespace
}  // namespace fleetplan
