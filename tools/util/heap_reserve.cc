#include "tools/util/heap_reserve.h"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>

namespace fleetplan {

void ReserveHugePageHeap(size_t bytes) {
  constexpr uintptr_t kHugePage = 2 << 20;
  // glibc serves blocks from the heap up to its largest mmap threshold,
  // 32 MiB; the reserve is taken in blocks below it.
  constexpr int kMmapThreshold = 32 << 20;
  constexpr size_t kBlock = 30 << 20;
  constexpr int kMostBlocks = 34;  // 1 GiB at most
  bytes = std::min(bytes, kBlock * kMostBlocks);
  if (bytes < 2 * kHugePage) return;
  // A free top of the heap goes back to the kernel only above twice the
  // reserve: the reserve stays for the allocations that follow.
  mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(std::min<size_t>(2 * bytes, INT_MAX)));
  // The blocks follow each other on the heap as it grows. glibc writes only
  // a header before each, so the pages between are untouched and can still
  // be huge ones. volatile: an allocation that is only freed may be elided.
  void* volatile blocks[kMostBlocks] = {};
  int count = 0;
  uintptr_t first = 0, last = 0;
  for (size_t left = bytes; left > 0 && count < kMostBlocks; ++count) {
    size_t size = std::min(left, kBlock);
    void* block = std::malloc(size);
    if (block == nullptr) break;
    blocks[count] = block;
    if (first == 0) first = reinterpret_cast<uintptr_t>(block);
    last = reinterpret_cast<uintptr_t>(block) + size;
    left -= size;
  }
  first = (first + kHugePage - 1) & ~(kHugePage - 1);
  last &= ~(kHugePage - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  while (count > 0) std::free(blocks[--count]);
}

}  // namespace fleetplan
