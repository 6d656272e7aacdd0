#ifndef FLEETPLAN_TOOLS_SECURE_TESTING_H_
#define FLEETPLAN_TOOLS_SECURE_TESTING_H_

// For tests of code that speaks TLS with a job key: a key of one repeated
// byte (two fills, two jobs), and SIGPIPE ignored as the agent ignores it
// (OpenSSL writes to sockets whose peer may be gone).

#include <signal.h>

#include <cstdint>

#include "tools/secure/job_key.h"

namespace fleetplan {

inline JobKey TestJobKey(uint8_t fill) {
  JobKey key;
  key.bytes.fill(fill);
  return key;
}

inline const bool kTestsIgnoreSigpipe = [] {
  signal(SIGPIPE, SIG_IGN);
  return true;
}();

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SECURE_TESTING_H_
