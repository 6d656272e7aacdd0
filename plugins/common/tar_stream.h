#ifndef FLEETPLAN_PLUGINS_COMMON_TAR_STREAM_H_
#define FLEETPLAN_PLUGINS_COMMON_TAR_STREAM_H_

// Tar streams (libarchive, POSIX ustar/pax) for the Engine API's archive
// endpoints (PUT takes a tar to extract, GET returns one) and for the files
// the slurm transport sends over a job step's stdin.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "plugins/transport.h"

namespace fleetplan {

// One tar of `files` (read from their local paths) under their relative
// paths, with their modes, owned by root. No directory entries: the daemon
// creates missing parents (0755) and an entry would reset the mode of a
// directory that exists. NotFound naming a local file that cannot be
// read; InvalidArgument for a path that is absolute or climbs out with "..".
absl::StatusOr<std::string> TarOfFiles(const std::vector<FileToSend>& files);

// A tar holding one regular file `name` with `content` and `mode`.
absl::StatusOr<std::string> TarOfOneFile(absl::string_view name,
                                         absl::string_view content,
                                         uint32_t mode);

// The content of the first entry of `tar`; InvalidArgument when that is
// not a regular file (a directory, a link) or the stream is corrupt.
absl::StatusOr<std::string> FirstFileOfTar(absl::string_view tar);

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_COMMON_TAR_STREAM_H_
