// libFuzzer target: any bytes as what the two ends of a sync relay read
// from each other. The first byte sets the manifest's entry count for the
// server's side (0 to 4335), the rest is read as a receiver reads a
// server's answer (the magic line, the size line, the manifest text) and
// as a server reads a receiver's line of wanted entries. Each parser must
// give a value or its documented error without a crash or undefined
// behaviour (the sanitizers catch those); a manifest it gives is sorted
// with unique paths and serializes to a text that parses to the same; a
// size is at most kMaxRelayManifest; wanted entries are below the count.
// A broken promise aborts, which libFuzzer reports with the input.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/agent/relay_wire.h"
#include "tools/fuzzing/fuzz_require.h"
#include "tools/sync/manifest.h"
#include "tools/util/path_policy.h"

namespace fleetplan {
namespace {

void CheckManifest(absl::string_view text) {
  absl::StatusOr<Manifest> manifest = ParseManifest(text);
  if (!manifest.ok()) {
    FuzzRequireOkOr(manifest.status(), absl::StatusCode::kInvalidArgument);
    return;
  }
  for (size_t i = 0; i < manifest->entries.size(); ++i) {
    const ManifestEntry &entry = manifest->entries[i];
    FuzzRequire(!entry.path.empty(), "an entry without a path", text);
    FuzzRequire(i == 0 || manifest->entries[i - 1].path < entry.path,
                "entries not sorted by unique paths", entry.path);
    CheckStaysUnderRoot("the workdir", entry.path).IgnoreError();  // the receiver's check
  }
  std::string serialized = SerializeManifest(*manifest);
  absl::StatusOr<Manifest> again = ParseManifest(serialized);
  FuzzRequire(again.ok(), "a serialized manifest does not parse", serialized);
  FuzzRequire(SerializeManifest(*again) == serialized, "a manifest changed on a round trip",
              serialized);
  FuzzRequire(DiffManifests(Manifest(), *again).to_send.size() == manifest->entries.size(),
              "a diff from nothing does not send every entry", serialized);
}

void CheckHeaderLine(absl::string_view line) {
  absl::StatusOr<std::string> identity = ParseRelayMagic(line);
  FuzzRequire(identity.ok() || absl::IsUnavailable(identity.status()),
              "a magic error that is not Unavailable", identity.status().ToString());
  absl::StatusOr<size_t> size = ParseManifestSize(line);
  FuzzRequire(size.ok() || absl::IsUnavailable(size.status()),
              "a size error that is not Unavailable", size.status().ToString());
  FuzzRequire(!size.ok() || *size <= kMaxRelayManifest, "a manifest size over the bound", line);
}

void CheckWanted(absl::string_view line, size_t entries) {
  absl::StatusOr<std::vector<size_t>> wanted = ParseWantedEntries(line, entries);
  if (!wanted.ok()) {
    FuzzRequireOkOr(wanted.status(), absl::StatusCode::kInvalidArgument);
    return;
  }
  FuzzRequire(wanted->size() <= line.size() / 2 + 1, "more entries than words", line);
  for (size_t index : *wanted) FuzzRequire(index < entries, "an entry beyond the manifest", line);
}

}  // namespace
}  // namespace fleetplan

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t entries = static_cast<size_t>(data[0]) * 17;
  absl::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  absl::string_view first_line = text.substr(0, text.find('\n'));
  fleetplan::CheckHeaderLine(first_line);
  fleetplan::CheckManifest(text);
  fleetplan::CheckWanted(text, entries);
  return 0;
}
