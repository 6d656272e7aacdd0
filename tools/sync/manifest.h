#ifndef FLEETPLAN_TOOLS_SYNC_MANIFEST_H_
#define FLEETPLAN_TOOLS_SYNC_MANIFEST_H_

// A manifest lists the files of a tree as they should be on a node: path
// (relative to the destination root), size, mode and content digest. The
// one built from the source tree is diffed against the one recorded on the
// node, so a sync sends only what changed. Every transport syncs through it.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/sync/stat_record.h"

namespace fleetplan {

struct ManifestEntry {
  std::string path;  // relative to the destination root, '/'-separated
  uint64_t size = 0;
  uint32_t mode = 0644;  // permission bits only
  std::string digest;    // content digest (digest.h)
  // True for files added from outside the source tree (built binaries, the
  // launch agent); they do not count in SourceDigest().
  bool extra = false;
  // Where the file is on this machine. Not serialized.
  std::string local_path;
};

// A file from outside the source tree that is synced too.
struct ExtraFile {
  std::string local_path;  // on this machine
  std::string path;        // relative to the destination root
};

struct Manifest {
  std::vector<ManifestEntry> entries;  // sorted by path, paths unique

  // Digest of the source files only (extras left out), so that a plan's
  // source_hash depends on the sources alone.
  std::string SourceDigest() const;
};

// True when `pattern` (fnmatch glob, e.g. ".git", "bazel-*", "*.pt")
// matches one component of `relative_path`.
bool IsExcluded(absl::string_view relative_path,
                const std::vector<std::string>& exclude);

// The content digest of a file (digest.h), read in pieces. NotFound when
// it is missing, Internal when it cannot be read; errors name the path.
absl::StatusOr<std::string> DigestFile(const std::string& path);

// Digests known from an earlier walk of the same tree, by relative path and
// stat (stat_record.h), and what this walk saw, to be kept for the next.
struct DigestCache {
  StatRecord known{kDigestCacheHeader};
  StatRecord seen{kDigestCacheHeader};
  int files_read = 0;  // files whose bytes this walk read

  static constexpr absl::string_view kDigestCacheHeader = "fleetplan-digests 1";
};

// Walks `root` (files and, through symlinks, the files they point at;
// symlinked directories are not followed) skipping paths with an excluded
// component and the tree's own `.fleetplan` state folder. With `cache`, a
// file that `cache->known` recorded as it is now is not read again. NotFound
// when `root` is missing, InvalidArgument when it is not a directory,
// Internal when a file cannot be read; errors name the path.
absl::StatusOr<Manifest> BuildManifest(const std::string& root,
                                       const std::vector<std::string>& exclude,
                                       DigestCache* cache = nullptr);

// Adds `extras` to `manifest` (replacing entries with the same path), with
// digests of their content. NotFound naming a missing file.
absl::Status AddExtraFiles(const std::vector<ExtraFile>& extras,
                           Manifest* manifest);

// One line per entry: `<kind> <mode octal> <size> <digest> <path>`, kind
// `f` (source) or `x` (extra), the path C-escaped and last.
std::string SerializeManifest(const Manifest& manifest);

// The inverse of SerializeManifest. InvalidArgument naming the line, or
// the path listed twice.
absl::StatusOr<Manifest> ParseManifest(absl::string_view text);

struct ManifestDiff {
  std::vector<ManifestEntry> to_send;   // new or changed (size, mode, digest)
  std::vector<std::string> to_remove;   // in `before`, gone from `after`
};

// What turns a destination holding `before` into one holding `after`.
ManifestDiff DiffManifests(const Manifest& before, const Manifest& after);

// The paths of `manifest` that the tree under `root` does not hold as
// listed: missing, not a file, or another size, mode or content digest.
// Every file is read in full. The agent runs this on a node at the end of a
// sync that changed something.
std::vector<std::string> FindTreeMismatches(const std::string& root,
                                            const Manifest& manifest);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SYNC_MANIFEST_H_
