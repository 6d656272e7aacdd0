#ifndef FLEETPLAN_TOOLS_SPEC_SPEC_PARSER_H_
#define FLEETPLAN_TOOLS_SPEC_SPEC_PARSER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

// Parses and validates spec text into a fully resolved ClusterSpec. Pure:
// no I/O. `path` is the spec file's absolute path: it names the file in
// errors, gives the default name (its stem) and anchors a relative
// [sync] source. Errors: InvalidArgument listing every error of the file,
// each "path:line:col: error: <key>: <what was wrong, what was expected>",
// followed by the source line and a caret under the column.
absl::StatusOr<ClusterSpec> ParseSpec(absl::string_view text,
                                      const std::string& path);

// Reads the file at `path` (made absolute against the current directory)
// and parses it. NotFound naming the file when it cannot be read,
// InvalidArgument "<path>: is a directory, not a spec file" for a directory.
absl::StatusOr<ClusterSpec> LoadSpecFile(const std::string& path);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SPEC_SPEC_PARSER_H_
