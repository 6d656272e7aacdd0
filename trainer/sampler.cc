#include "trainer/sampler.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace fleetplan::trainer {

int64_t ShardSize(const EpochSplit& split) {
  const int64_t left = std::max<int64_t>(0, split.dataset_size - split.start);
  return (left + split.world_size - 1) / split.world_size;
}

int64_t StepsLeft(const EpochSplit& split) {
  return (ShardSize(split) + split.batch_size - 1) / split.batch_size;
}

int64_t PositionAfter(const EpochSplit& split, int64_t steps) {
  const int64_t per_rank =
      std::min(steps * split.batch_size, ShardSize(split));
  return std::min(split.dataset_size,
                  split.start + per_rank * split.world_size);
}

std::vector<int64_t> ShardIndices(const EpochSplit& split, int rank,
                                  uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(split.dataset_size);
  std::iota(order.begin(), order.end(), 0);
  // Every rank seeds the same engine, so all ranks agree on the permutation
  // without communicating, at any world size.
  std::mt19937_64 engine(seed + static_cast<uint64_t>(epoch));
  std::shuffle(order.begin(), order.end(), engine);

  const int64_t per_rank = ShardSize(split);
  const int64_t end = split.start + per_rank * split.world_size;
  std::vector<int64_t> shard;
  shard.reserve(per_rank);
  for (int64_t i = split.start + rank; i < end; i += split.world_size) {
    shard.push_back(order[i % split.dataset_size]);
  }
  return shard;
}

std::vector<int64_t> StridedIndices(int64_t dataset_size, int rank,
                                    int world_size) {
  std::vector<int64_t> shard;
  for (int64_t i = rank; i < dataset_size; i += world_size) shard.push_back(i);
  return shard;
}

}  // namespace fleetplan::trainer
