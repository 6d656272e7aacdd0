#ifndef FLEETPLAN_TRAINER_SAMPLER_H_
#define FLEETPLAN_TRAINER_SAMPLER_H_

// Which samples each rank trains on, like PyTorch's DistributedSampler with
// shuffling: every rank draws the same permutation from (seed, epoch), pads
// it by wrapping around to a multiple of the world size, and takes every
// world_size-th index starting at its rank. Shards are disjoint up to the
// padding, cover the data set together, and change every epoch.

#include <cstdint>
#include <vector>

namespace fleetplan::trainer {

// The indices into a data set of `dataset_size` samples that `rank` of
// `world_size` trains on in `epoch`; all ranks get ceil(size / world_size).
std::vector<int64_t> ShardIndices(int64_t dataset_size, int rank,
                                  int world_size, uint64_t seed,
                                  int64_t epoch);

// The unshuffled, unpadded shard: indices rank, rank + world_size, ...
// (evaluation counts every sample exactly once).
std::vector<int64_t> StridedIndices(int64_t dataset_size, int rank,
                                    int world_size);

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_SAMPLER_H_
