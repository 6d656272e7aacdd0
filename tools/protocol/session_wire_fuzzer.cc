// libFuzzer target: any bytes as the stream of an apply session, as either
// side reads it. The first byte picks how the rest arrives (in pieces of
// 1 to 256 bytes), the rest is the stream. FrameReader must cut it into
// frames until it needs more or says DataLoss, without a crash or
// undefined behaviour (the sanitizers catch those); each frame it gives
// must be exactly the bytes it took, encoded again, and what it keeps must
// be what was fed and not yet taken. A broken promise aborts, which
// libFuzzer reports with the input.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "tools/fuzzing/fuzz_require.h"
#include "tools/protocol/session_wire.h"

namespace fleetplan {
namespace {

// Takes every whole frame; false once the stream broke.
bool TakeFrames(FrameReader &reader, absl::string_view fed, size_t *taken) {
  while (true) {
    absl::StatusOr<std::optional<Frame>> frame = reader.Next();
    if (!frame.ok()) {
      FuzzRequireOkOr(frame.status(), absl::StatusCode::kDataLoss);
      return false;
    }
    if (!frame->has_value()) return true;
    std::string encoded = EncodeFrame((*frame)->type, (*frame)->fields);
    FuzzRequire(fed.substr(*taken, encoded.size()) == encoded,
                "a frame is not the bytes it came from", encoded);
    *taken += encoded.size();
    FuzzRequire(reader.pending() == fed.size() - *taken, "pending bytes do not add up",
                absl::StrCat(reader.pending(), " vs ", fed.size() - *taken));
    FrameNumber(**frame, 0, "the fuzzer").IgnoreError();
  }
}

void Check(absl::string_view input) {
  if (input.empty()) return;
  size_t piece = static_cast<uint8_t>(input[0]) + 1;
  absl::string_view stream = input.substr(1);
  FrameReader reader;
  size_t fed = 0;
  size_t taken = 0;
  while (fed < stream.size()) {
    absl::string_view next = stream.substr(fed, piece);
    reader.Feed(next);
    fed += next.size();
    if (!TakeFrames(reader, stream.substr(0, fed), &taken)) return;
  }
}

}  // namespace
}  // namespace fleetplan

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fleetplan::Check(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
