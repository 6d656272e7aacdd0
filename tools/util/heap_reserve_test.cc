#include "tools/util/heap_reserve.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

// The VmFlags of every [heap] mapping of this process, joined.
std::string HeapVmFlags() {
  std::ifstream smaps("/proc/self/smaps");
  std::string line, flags;
  bool in_heap = false;
  while (std::getline(smaps, line)) {
    // A mapping's first line starts with its address range ("55a0-55b0 rw-p
    // ..."); the lines of its fields that follow do not ("VmFlags: rd wr").
    bool mapping = line.find('-') < line.find(' ');
    if (mapping) in_heap = line.find(" [heap]") != std::string::npos;
    if (in_heap && line.rfind("VmFlags:", 0) == 0) flags += line + "\n";
  }
  return flags;
}

TEST(ReserveHugePageHeapTest, TheHeapGrowsOnceAndLaterAllocationsStayInIt) {
  ReserveHugePageHeap(32 << 20);
  EXPECT_NE(HeapVmFlags().find(" hg"), std::string::npos) << HeapVmFlags();
  void* end = sbrk(0);
  // 24 MiB in pieces, as a plan allocates: served from the reserve.
  void* pieces[24 * 16];
  for (void*& piece : pieces) piece = std::malloc(64 << 10);
  EXPECT_EQ(sbrk(0), end) << "the heap grew again";
  for (void* piece : pieces) std::free(piece);
  EXPECT_EQ(sbrk(0), end) << "the reserve was handed back";
}

}  // namespace
}  // namespace fleetplan
