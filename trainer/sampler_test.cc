#include "trainer/sampler.h"

#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetplan::trainer {
namespace {

// A whole epoch (from its start) among `world_size` ranks.
EpochSplit Whole(int64_t dataset_size, int world_size, int64_t batch = 1) {
  return {dataset_size, /*start=*/0, world_size, batch};
}

TEST(ShardIndicesTest, ShardsAreDisjointAndCoverTheDataSet) {
  constexpr int64_t kSize = 1000;
  constexpr int kWorld = 4;
  std::set<int64_t> seen;
  for (int rank = 0; rank < kWorld; ++rank) {
    std::vector<int64_t> shard = ShardIndices(Whole(kSize, kWorld), rank, 7, 0);
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
    std::vector<int64_t> shard = ShardIndices(Whole(10, 4), rank, 1, 3);
    EXPECT_EQ(shard.size(), 3u);
    seen.insert(shard.begin(), shard.end());
  }
  EXPECT_EQ(seen.size(), 12u);
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 10u);
}

TEST(ShardIndicesTest, ReshuffledEveryEpochAndReproducible) {
  std::vector<int64_t> epoch0 = ShardIndices(Whole(500, 2), 1, 42, 0);
  std::vector<int64_t> epoch1 = ShardIndices(Whole(500, 2), 1, 42, 1);
  EXPECT_NE(epoch0, epoch1);
  EXPECT_EQ(epoch0, ShardIndices(Whole(500, 2), 1, 42, 0));
  EXPECT_NE(epoch0, ShardIndices(Whole(500, 2), 1, 43, 0));
  // Shuffled, not the identity order of the strided shard.
  EXPECT_NE(epoch0, StridedIndices(500, 1, 2));
}

TEST(ShardIndicesTest, SingleRankGetsAPermutation) {
  std::vector<int64_t> shard = ShardIndices(Whole(100, 1), 0, 5, 2);
  EXPECT_EQ(std::set<int64_t>(shard.begin(), shard.end()).size(), 100u);
}

TEST(StridedIndicesTest, CountsEverySampleOnce) {
  EXPECT_THAT(StridedIndices(10, 1, 4), ::testing::ElementsAre(1, 5, 9));
  EXPECT_THAT(StridedIndices(10, 3, 4), ::testing::ElementsAre(3, 7));
}

TEST(EpochSplitTest, AWholeEpochHasTheStepsOfEvenShards) {
  // 60000 samples on 2 ranks of 64: 30000 each, 469 steps, the last short.
  EXPECT_EQ(ShardSize(Whole(60000, 2, 64)), 30000);
  EXPECT_EQ(StepsLeft(Whole(60000, 2, 64)), 469);
  EXPECT_EQ(PositionAfter(Whole(60000, 2, 64), 200), 25600);
  EXPECT_EQ(PositionAfter(Whole(60000, 2, 64), 469), 60000);
  // Padding never counts past the end of the data set.
  EXPECT_EQ(PositionAfter(Whole(10, 4, 2), 2), 10);
}

TEST(EpochSplitTest, TheRestOfAnEpochIsSplitAmongTheNewRanks) {
  // Resumed at 25600 of 60000 on 3 ranks of 64: 34400 left, 11467 each
  // (two padded), 180 steps.
  const EpochSplit rest{60000, 25600, 3, 64};
  EXPECT_EQ(ShardSize(rest), 11467);
  EXPECT_EQ(StepsLeft(rest), 180);
  EXPECT_EQ(PositionAfter(rest, 0), 25600);
  EXPECT_EQ(PositionAfter(rest, 1), 25600 + 3 * 64);
  EXPECT_EQ(PositionAfter(rest, 180), 60000);
  EXPECT_EQ(PositionAfter(rest, 1000), 60000);
  // An epoch that was finished has nothing left.
  EXPECT_EQ(ShardSize({60000, 60000, 3, 64}), 0);
  EXPECT_EQ(StepsLeft({60000, 60000, 3, 64}), 0);
}

TEST(EpochSplitTest, TheSameWorldSizeContinuesTheSameShards) {
  const EpochSplit whole = Whole(1000, 4, 8);
  const EpochSplit rest{1000, PositionAfter(whole, 10), 4, 8};
  for (int rank = 0; rank < 4; ++rank) {
    std::vector<int64_t> all = ShardIndices(whole, rank, 3, 2);
    std::vector<int64_t> tail(all.begin() + 10 * 8, all.end());
    EXPECT_EQ(ShardIndices(rest, rank, 3, 2), tail) << "rank " << rank;
  }
}

// Trains `steps` steps on `old_world` ranks, then the rest of the epoch on
// `new_world` ranks: every sample is trained on, and the only repeats are
// the fewer than `new_world` that pad the last shards.
void ExpectEverySampleOnce(int64_t size, int old_world, int new_world,
                           int64_t batch, int64_t steps) {
  SCOPED_TRACE(testing::Message() << old_world << " -> " << new_world);
  std::multiset<int64_t> trained;
  const EpochSplit before = Whole(size, old_world, batch);
  for (int rank = 0; rank < old_world; ++rank) {
    std::vector<int64_t> shard = ShardIndices(before, rank, 11, 5);
    trained.insert(shard.begin(), shard.begin() + steps * batch);
  }
  const EpochSplit after{size, PositionAfter(before, steps), new_world, batch};
  EXPECT_EQ(static_cast<int64_t>(trained.size()), after.start);
  for (int rank = 0; rank < new_world; ++rank) {
    std::vector<int64_t> shard = ShardIndices(after, rank, 11, 5);
    EXPECT_EQ(static_cast<int64_t>(shard.size()), ShardSize(after));
    trained.insert(shard.begin(), shard.end());
  }
  const std::set<int64_t> distinct(trained.begin(), trained.end());
  EXPECT_EQ(static_cast<int64_t>(distinct.size()), size);
  EXPECT_EQ(*distinct.begin(), 0);
  EXPECT_EQ(*distinct.rbegin(), size - 1);
  const int64_t repeats = static_cast<int64_t>(trained.size()) - size;
  EXPECT_GE(repeats, 0);
  EXPECT_LT(repeats, new_world);
}

TEST(EpochSplitTest, ReshardingTrainsEverySampleOnceButThePadding) {
  ExpectEverySampleOnce(1003, 2, 1, 16, 7);
  ExpectEverySampleOnce(1003, 2, 3, 16, 7);
  ExpectEverySampleOnce(1003, 3, 2, 16, 5);
  ExpectEverySampleOnce(1003, 4, 7, 5, 30);
  ExpectEverySampleOnce(1000, 2, 2, 10, 0);
}

}  // namespace
}  // namespace fleetplan::trainer
