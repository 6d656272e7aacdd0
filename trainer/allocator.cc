#include "trainer/allocator.h"

#include <malloc.h>

#include <cstdlib>
#include <initializer_list>

namespace fleetplan::trainer {

bool KeepFreedMemoryInHeap() {
  for (const char* name :
       {"GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_",
        "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_"}) {
    if (std::getenv(name) != nullptr) return false;
  }
  // Setting either disables glibc's adaptive thresholds, so set both.
  return mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes) == 1 &&
         mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes) == 1;
}

}  // namespace fleetplan::trainer
