#ifndef FLEETPLAN_TRAINER_ALLOCATOR_H_
#define FLEETPLAN_TRAINER_ALLOCATOR_H_

// LibTorch's CPU tensors come from glibc malloc. By default glibc serves
// blocks above its (adaptive) mmap threshold with fresh mmaps and trims the
// heap top back to the kernel whenever more than twice that is free. A
// training step frees most of its activations and allocates them again in
// the next step, so each step re-faults hundreds of megabytes of zeroed
// pages: a single rank with one thread spent over half its time in the
// kernel's page-fault handler. Keeping freed memory in the heap costs a few
// percent of peak RSS and removes that.

namespace fleetplan::trainer {

// Blocks up to kMmapThresholdBytes come from the heap, and the heap is
// trimmed only when more than kTrimThresholdBytes at its top are free.
inline constexpr int kMmapThresholdBytes = 32 << 20;   // glibc's maximum
inline constexpr int kTrimThresholdBytes = 256 << 20;

// Applies the thresholds above through mallopt unless the user tunes malloc
// through the environment (MALLOC_*_ or GLIBC_TUNABLES). Returns whether it
// changed anything. Call once, before the first tensor is allocated.
bool KeepFreedMemoryInHeap();

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_ALLOCATOR_H_
