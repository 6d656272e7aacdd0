#ifndef FLEETPLAN_TOOLS_UTIL_HEAP_RESERVE_H_
#define FLEETPLAN_TOOLS_UTIL_HEAP_RESERVE_H_

// Grows the malloc heap once by `bytes`, asks the kernel to back that part
// with transparent huge pages, and keeps it: the allocations that follow
// are served from it.
//
// Why: a process that builds a large plan touches every page of its heap
// for the first time, and on virtual machines each first touch of a 4 KiB
// page can cost 10-20 µs (a trap to the hypervisor), which made a cold
// `plan` of 1,000 nodes several times slower than a warm one. A huge page
// is faulted once per 2 MiB. Where the kernel has no huge pages to give
// (THP off, or memory fragmented), the heap simply stays as it was.
//
// Call it once, early, from the main thread of a short-lived command; the
// heap then stays at least `bytes` large until the process ends.

#include <cstddef>

namespace fleetplan {

void ReserveHugePageHeap(size_t bytes);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_UTIL_HEAP_RESERVE_H_
