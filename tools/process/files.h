#ifndef FLEETPLAN_TOOLS_PROCESS_FILES_H_
#define FLEETPLAN_TOOLS_PROCESS_FILES_H_

// Files on the node a process runs on, written so that a reader never sees
// half a file: the launch agent's result.json and the local transport's
// WriteFile and PutFiles.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

// Creates `path` and its missing parents (mode 0755). Errors name the path.
absl::Status MakeDirs(const std::string& path);

// Reads a whole file. NotFound when it does not exist.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// True when `path` is a regular file (a link to one counts).
bool IsRegularFile(const std::string& path);

// The whole of the regular file `name` in the folder open at `dir`, not
// through a symbolic link; nullopt for a link, for anything that is not a
// regular file, and for a file that cannot be read.
std::optional<std::string> ReadRegularFileAt(int dir, const char* name);

// The names in the folder open at `dir`, "." and ".." left out, into
// `*names`; false, with errno set, when it cannot be listed. `dir` stays
// open, and the caller's.
bool ListFolderAt(int dir, std::vector<std::string>* names);

// What a replaced file must survive. Every replacement is atomic: a reader
// sees the old file or the new one, never half of it. kCrash also waits for
// the disk (fsync) before the rename, so the new file survives the
// machine's crash or power loss. kProcess does not: what can be made again
// (a node's job state, which its agent rewrites; what apply wrote to a node
// and writes again when it reads something else there) does not wait a
// disk's flush each time (a few milliseconds each, dozens per apply).
enum class Durability { kCrash, kProcess };

// Writes `content` to a temporary file beside `path`, sets `mode` and
// renames it over `path`, creating parent directories; `durability` says
// whether it is fsync'ed first.
absl::Status WriteFileAtomic(const std::string& path, absl::string_view content, uint32_t mode,
                             Durability durability = Durability::kCrash);

// Writes all of `data` to `fd` (-1: nothing), waiting when it is
// non-blocking and full. Errors are dropped: for output whose reader may be
// gone (a closed stdout must not stop the launch agent's ranks).
void WriteFully(int fd, absl::string_view data);

// Copies `from` to `to` the same way (NotFound when `from` is missing).
absl::Status CopyFileAtomic(const std::string& from, const std::string& to,
                            uint32_t mode);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROCESS_FILES_H_
