#ifndef FLEETPLAN_TRAINER_SAMPLER_H_
#define FLEETPLAN_TRAINER_SAMPLER_H_

// Which samples each rank trains on, like PyTorch's DistributedSampler with
// shuffling: every rank draws the same permutation (the epoch's order) from
// (seed, epoch), pads it by wrapping around to a multiple of the world size,
// and takes every world_size-th position starting at its rank. Shards are
// disjoint up to the padding, cover the data set together, and change every
// epoch.
//
// Because the shards are strided, the ranks consume the epoch's order front
// to back: after k steps of batch B, W ranks have trained on exactly its
// first k * B * W positions. That prefix, not the step, is where an epoch
// stands, and the rest of the epoch can be split again among any number of
// ranks (a resume with another world size): no sample is repeated or skipped
// but the padding that evens out the last shards.

#include <cstdint>
#include <vector>

namespace fleetplan::trainer {

// The rest of one epoch, from `start`, split among `world_size` ranks that
// each take `batch_size` samples a step.
struct EpochSplit {
  int64_t dataset_size = 0;
  int64_t start = 0;  // positions of the epoch's order trained on before
  int world_size = 1;
  int64_t batch_size = 1;  // per rank
};

// Samples each rank trains on through the rest of the epoch:
// ceil((dataset_size - start) / world_size).
int64_t ShardSize(const EpochSplit& split);

// Steps to the end of the epoch: ceil(ShardSize / batch_size) (the last
// batch may be short).
int64_t StepsLeft(const EpochSplit& split);

// The epoch's position after `steps` more steps: start + min(steps *
// batch_size, ShardSize) * world_size, at most dataset_size (the end).
int64_t PositionAfter(const EpochSplit& split, int64_t steps);

// The indices into the data set that `rank` trains on through the rest of
// `epoch` (ShardSize of them): positions start + rank, start + rank +
// world_size, ... of the epoch's order, wrapping around to its beginning
// for the padding.
std::vector<int64_t> ShardIndices(const EpochSplit& split, int rank,
                                  uint64_t seed, int64_t epoch);

// The unshuffled, unpadded shard: indices rank, rank + world_size, ...
// (evaluation counts every sample exactly once).
std::vector<int64_t> StridedIndices(int64_t dataset_size, int rank,
                                    int world_size);

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_SAMPLER_H_
