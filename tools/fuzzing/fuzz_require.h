#ifndef FLEETPLAN_TOOLS_FUZZING_FUZZ_REQUIRE_H_
#define FLEETPLAN_TOOLS_FUZZING_FUZZ_REQUIRE_H_

// The checks of a fuzz target: a broken promise aborts, which libFuzzer
// reports with the input that broke it.

#include <cstdio>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

// Aborts, printing `what` and `detail`, unless `ok`.
inline void FuzzRequire(bool ok, absl::string_view what, absl::string_view detail) {
  if (ok) return;
  std::fprintf(stderr, "fuzz target: %.*s: %.*s\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// Aborts unless `status` is OK or of the code `code` the parser documents.
inline void FuzzRequireOkOr(const absl::Status& status, absl::StatusCode code) {
  FuzzRequire(status.ok() || status.code() == code, "an error of another code",
              status.ToString());
}

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_FUZZING_FUZZ_REQUIRE_H_
