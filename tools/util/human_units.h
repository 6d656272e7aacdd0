#ifndef FLEETPLAN_TOOLS_UTIL_HUMAN_UNITS_H_
#define FLEETPLAN_TOOLS_UTIL_HUMAN_UNITS_H_

// Numbers as a person reads them, for every human output (machine output
// keeps plain numbers): sizes in binary units, durations in the largest
// two units that matter, counts with thousands separated.

#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace fleetplan {

// "512 B", "1.5 KiB", "12.3 MiB", "2.0 GiB".
std::string FormatBytes(uint64_t bytes);

// "0.3s", "41s" (from 10 s on, whole seconds), "1m 12s", "2h 5m".
std::string FormatElapsed(absl::Duration elapsed);

// "469", "5,450", "1,234,567".
std::string FormatCount(int64_t count);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_UTIL_HUMAN_UNITS_H_
