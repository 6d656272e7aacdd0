// libFuzzer target: any bytes as a spec file. ParseSpec must give a spec or
// InvalidArgument, without a crash, a leak or undefined behaviour (the
// sanitizers catch those), and what it gives must keep the spec's promises:
// errors never write a control character but newline, never quote more than
// a window of a long line; a spec that parses holds no NUL anywhere and no
// control character where the format refuses one. A broken promise aborts,
// which libFuzzer reports with the input.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "tools/spec/cluster_spec.h"
#include "tools/spec/spec_errors.h"
#include "tools/spec/spec_parser.h"
#include "tools/spec/validators.h"
#include "tools/util/path_policy.h"

namespace fleetplan {
namespace {

void Require(bool ok, absl::string_view what, absl::string_view detail) {
  if (ok) return;
  fprintf(stderr, "spec_fuzzer: %.*s: %.*s\n", static_cast<int>(what.size()), what.data(),
          static_cast<int>(detail.size()), detail.data());
  abort();
}

int Characters(absl::string_view text) {
  int characters = 0;
  for (char c : text) characters += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  return characters;
}

void CheckError(const absl::Status& status) {
  Require(status.code() == absl::StatusCode::kInvalidArgument, "error is not InvalidArgument",
          status.ToString());
  // The longest quoted line: indent, "...", the window, "...".
  const int widest = 2 + 3 + SpecErrors::kSourceWidth + 3;
  for (absl::string_view line : absl::StrSplit(status.message(), '\n')) {
    Require(FindControlCharacter(line, false) == absl::string_view::npos,
            "an error writes a control character", line);
    if (!absl::StartsWith(line, "/fuzz/")) {
      Require(Characters(line) <= widest, "an error quotes too wide a line", line);
    }
  }
}

void CheckPrintable(absl::string_view value, absl::string_view what) {
  Require(FindControlCharacter(value, false) == absl::string_view::npos, what, value);
}

void CheckText(absl::string_view value, absl::string_view what) {
  Require(FindControlCharacter(value, true) == absl::string_view::npos, what, value);
}

void CheckSpec(const ClusterSpec& spec) {
  Require(!spec.nodes.empty(), "a spec without nodes parsed", spec.name);
  CheckPrintable(spec.name, "name holds a control character");
  CheckPrintable(spec.job.program, "job.program holds a control character");
  for (const std::string& arg : spec.job.args) CheckText(arg, "an argument holds a control character");
  for (const auto& [name, value] : spec.env) CheckText(value, "an env value holds a control character");
  for (const NodeSpec& node : spec.nodes) {
    CheckPrintable(node.name, "a node name holds a control character");
    Require(IsCleanAbsolutePath(node.workdir), "a workdir is not a clean absolute path",
            node.workdir);
    CheckPrintable(node.workdir, "a workdir holds a control character");
    for (const auto& [name, value] : spec.GroupEnv(node)) {
      CheckText(value, "a group's env value holds a control character");
    }
  }
}

}  // namespace
}  // namespace fleetplan

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<fleetplan::ClusterSpec> spec = fleetplan::ParseSpec(text, "/fuzz/spec.toml");
  if (spec.ok()) {
    fleetplan::CheckSpec(*spec);
  } else {
    fleetplan::CheckError(spec.status());
  }
  return 0;
}
