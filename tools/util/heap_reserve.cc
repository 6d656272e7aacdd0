#include "tools/util/heap_reserve.h"

#include <malloc.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

namespace fleetplan {

void ReserveHugePageHeap(size_t bytes) {
  constexpr uintptr_t kHugePage = 2 << 20;
  if (bytes < 2 * kHugePage) return;
  // Served from the heap (not a separate mapping), and not handed back to
  // the kernel when freed, so that later allocations reuse it.
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(bytes + kHugePage));
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(2 * bytes + kHugePage));
  void* block = std::malloc(bytes);
  if (block == nullptr) return;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(block) + kHugePage - 1) & ~(kHugePage - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(block) + bytes) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  std::free(block);
}

}  // namespace fleetplan
