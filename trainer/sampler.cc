#include "trainer/sampler.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace fleetplan::trainer {

std::vector<int64_t> ShardIndices(int64_t dataset_size, int rank,
                                  int world_size, uint64_t seed,
                                  int64_t epoch) {
  std::vector<int64_t> order(dataset_size);
  std::iota(order.begin(), order.end(), 0);
  // Every rank seeds the same engine, so all ranks agree on the permutation
  // without communicating.
  std::mt19937_64 engine(seed + static_cast<uint64_t>(epoch));
  std::shuffle(order.begin(), order.end(), engine);

  const int64_t per_rank = (dataset_size + world_size - 1) / world_size;
  std::vector<int64_t> shard;
  shard.reserve(per_rank);
  for (int64_t i = rank; i < per_rank * world_size; i += world_size) {
    shard.push_back(order[i % dataset_size]);
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
