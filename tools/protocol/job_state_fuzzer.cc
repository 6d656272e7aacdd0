// libFuzzer target: any bytes as a job.json read back from a node.
// JobStateFromJson must give a state or InvalidArgument, without an
// exception, a crash or undefined behaviour (the sanitizers catch those),
// and a state it gives must write a job.json that reads back and writes
// the same again. A broken promise aborts, which libFuzzer reports with
// the input.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/fuzzing/fuzz_require.h"
#include "tools/protocol/job_state.h"

namespace fleetplan {
namespace {

void Check(absl::string_view text) {
  absl::StatusOr<NodeJobState> state = JobStateFromJson(text);
  if (!state.ok()) {
    FuzzRequireOkOr(state.status(), absl::StatusCode::kInvalidArgument);
    return;
  }
  // Described as status and apply describe it.
  if (state->failure.has_value()) DescribeFailure(*state->failure);
  std::string written = JobStateToJson(*state);
  absl::StatusOr<NodeJobState> again = JobStateFromJson(written);
  FuzzRequire(again.ok(), "a written job.json does not read back",
              again.ok() ? written : again.status().ToString() + "\n" + written);
  FuzzRequire(JobStateToJson(*again) == written, "a job.json changed on a round trip", written);
}

}  // namespace
}  // namespace fleetplan

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fleetplan::Check(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
