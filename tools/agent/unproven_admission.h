// A server's rule for the connections that have not proven the job's key
// yet (the coordinator's supervisor port, the relay): at most kMaxUnproven
// at once, and each gets kUnprovenGrace to prove it before a newcomer may
// take its place. Without the grace, a stranger's burst of connections,
// accepted back to back, cut off a worker's connection before its first
// byte was read, again and again until the worker gave up; with it, a
// worker that connects has its time, and strangers still cost the server a
// bounded number of connections.
#ifndef FLEETPLAN_TOOLS_AGENT_UNPROVEN_ADMISSION_H_
#define FLEETPLAN_TOOLS_AGENT_UNPROVEN_ADMISSION_H_

#include <cstddef>
#include <optional>

#include "absl/time/time.h"

namespace fleetplan {

inline constexpr size_t kMaxUnproven = 16;
inline constexpr absl::Duration kUnprovenGrace = absl::Seconds(1);

enum class Admission {
  kAdmit,                  // room for one more
  kAdmitCuttingOffOldest,  // full; the oldest had its grace: it goes
  kRefuse,                 // full of connections still in their grace
};

// `unproven`: how many connections are still proving the key; `oldest`:
// when the oldest of them was accepted (nullopt when none is).
Admission AdmitUnproven(size_t unproven, std::optional<absl::Time> oldest, absl::Time now);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_UNPROVEN_ADMISSION_H_
