#include "trainer/sampler.h"

#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetplan::trainer {
namespace {

TEST(ShardIndicesTest, ShardsAreDisjointAndCoverTheDataSet) {
  constexpr int64_t kSize = 1000;
  constexpr int kWorld = 4;
  std::set<int64_t> seen;
  for (int rank = 0; rank < kWorld; ++rank) {
    std::vector<int64_t> shard = ShardIndices(kSize, rank, kWorld, 7, 0);
    EXPECT_EQ(shard.size(), 250u);
    for (int64_t index : shard) {
      EXPECT_TRUE(seen.insert(index).second) << "index " << index << " twice";
    }
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), 999);
}

TEST(ShardIndicesTest, UnevenSizesArePaddedToEqualLengths) {
  // 10 samples on 4 ranks: 3 each, two indices repeated by the padding.
  std::multiset<int64_t> seen;
  for (int rank = 0; rank < 4; ++rank) {
    std::vector<int64_t> shard = ShardIndices(10, rank, 4, 1, 3);
    EXPECT_EQ(shard.size(), 3u);
    seen.insert(shard.begin(), shard.end());
  }
  EXPECT_EQ(seen.size(), 12u);
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 10u);
}

TEST(ShardIndicesTest, ReshuffledEveryEpochAndReproducible) {
  std::vector<int64_t> epoch0 = ShardIndices(500, 1, 2, 42, 0);
  std::vector<int64_t> epoch1 = ShardIndices(500, 1, 2, 42, 1);
  EXPECT_NE(epoch0, epoch1);
  EXPECT_EQ(epoch0, ShardIndices(500, 1, 2, 42, 0));
  EXPECT_NE(epoch0, ShardIndices(500, 1, 2, 43, 0));
  // Shuffled, not the identity order of the strided shard.
  EXPECT_NE(epoch0, StridedIndices(500, 1, 2));
}

TEST(ShardIndicesTest, SingleRankGetsAPermutation) {
  std::vector<int64_t> shard = ShardIndices(100, 0, 1, 5, 2);
  EXPECT_EQ(std::set<int64_t>(shard.begin(), shard.end()).size(), 100u);
}

TEST(StridedIndicesTest, CountsEverySampleOnce) {
  EXPECT_THAT(StridedIndices(10, 1, 4), ::testing::ElementsAre(1, 5, 9));
  EXPECT_THAT(StridedIndices(10, 3, 4), ::testing::ElementsAre(3, 7));
}

}  // namespace
}  // namespace fleetplan::trainer
