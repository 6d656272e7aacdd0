#include "tools/sync/manifest.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "tools/process/fd.h"
#include "tools/process/files.h"
#include "tools/protocol/node_layout.h"
#include "tools/util/digest.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

absl::Status ErrnoError(absl::string_view what, const std::string& path) {
  std::string message = absl::StrCat(what, " ", path, ": ", std::strerror(errno));
  if (errno == ENOENT) return absl::NotFoundError(message);
  return absl::InternalError(message);
}

}  // namespace

// Streams the file through the digester rather than reading it whole:
// trees may hold large checkpoints or datasets.
absl::StatusOr<std::string> DigestFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open", path);
  Digester digester;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status status = ErrnoError("cannot read", path);
      close(fd);
      return status;
    }
    if (n == 0) break;
    digester.AddBytes(buffer, n);
  }
  close(fd);
  return digester.Hex();
}

namespace {

// The entry of the file at `local_path`, whose stat(2) (following links)
// is `st`.
absl::StatusOr<ManifestEntry> EntryFor(const std::string& local_path, std::string relative,
                                       const struct stat& st, bool extra,
                                       DigestCache* cache = nullptr) {
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(local_path, " is not a file"));
  }
  ManifestEntry entry;
  entry.path = std::move(relative);
  entry.size = st.st_size;
  entry.mode = st.st_mode & 07777;
  entry.extra = extra;
  entry.local_path = local_path;
  std::optional<std::string> known;
  if (cache != nullptr) known = cache->known.DigestIfUnchanged(entry.path, st);
  if (known.has_value()) {
    entry.digest = *std::move(known);
  } else {
    FP_ASSIGN_OR_RETURN(entry.digest, DigestFile(local_path));
    if (cache != nullptr) ++cache->files_read;
  }
  if (cache != nullptr) cache->seen.Add(entry.path, st, entry.digest);
  return entry;
}

// The entry of the file at `local_path` (links followed).
absl::StatusOr<ManifestEntry> EntryAt(const std::string& local_path, std::string relative,
                                      bool extra) {
  struct stat st;
  if (stat(local_path.c_str(), &st) != 0) return ErrnoError("cannot stat", local_path);
  return EntryFor(local_path, std::move(relative), st, extra);
}

// Lists the folder open at `dir` (its path is `root`/`relative`) into
// `entries`. Names are looked up relative to the folder's descriptor, not
// as whole paths: the kernel walks one component per file instead of the
// whole path each time (and each file is stat'ed once), which is most of
// what walking an unchanged tree costs.
absl::Status Walk(int dir, const std::string& root, const std::string& relative,
                  const std::vector<std::string>& exclude, DigestCache* cache,
                  std::vector<ManifestEntry>* entries) {
  std::vector<std::string> names;
  if (!ListFolderAt(dir, &names)) {
    return ErrnoError("cannot list", relative.empty() ? root : absl::StrCat(root, "/", relative));
  }
  for (const std::string& name : names) {
    // The node-side state folder is never part of what is synced.
    if (relative.empty() && name == kStateDirName) continue;
    if (IsExcluded(name, exclude)) continue;
    std::string child = relative.empty() ? name : absl::StrCat(relative, "/", name);
    std::string path = absl::StrCat(root, "/", child);
    struct stat st;
    if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return ErrnoError("cannot stat", path);
    }
    if (S_ISDIR(st.st_mode)) {
      Fd sub(openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (sub.get() < 0) return ErrnoError("cannot list", path);
      FP_RETURN_IF_ERROR(Walk(sub.get(), root, child, exclude, cache, entries));
      continue;
    }
    // A symlink counts as the file it points at; dangling links, links to
    // directories, sockets and the like are skipped.
    if (S_ISLNK(st.st_mode) && (fstatat(dir, name.c_str(), &st, 0) != 0 || !S_ISREG(st.st_mode))) {
      continue;
    }
    if (!S_ISREG(st.st_mode)) continue;
    FP_ASSIGN_OR_RETURN(ManifestEntry entry, EntryFor(path, child, st, /*extra=*/false, cache));
    entries->push_back(std::move(entry));
  }
  return absl::OkStatus();
}

void SortEntries(std::vector<ManifestEntry>* entries) {
  std::sort(entries->begin(), entries->end(),
            [](const ManifestEntry& a, const ManifestEntry& b) { return a.path < b.path; });
}

bool SameContent(const ManifestEntry& a, const ManifestEntry& b) {
  return a.size == b.size && a.mode == b.mode && a.digest == b.digest;
}

absl::StatusOr<ManifestEntry> ParseLine(absl::string_view line) {
  std::vector<absl::string_view> fields = absl::StrSplit(line, absl::MaxSplits(' ', 4));
  ManifestEntry entry;
  uint32_t mode = 0;
  std::string path;
  if (fields.size() != 5 || (fields[0] != "f" && fields[0] != "x") ||
      !absl::SimpleAtoi(fields[2], &entry.size) || fields[3].empty() ||
      !absl::CUnescape(fields[4], &path) || path.empty()) {
    return absl::InvalidArgumentError("malformed entry");
  }
  for (char c : fields[1]) {
    if (c < '0' || c > '7') return absl::InvalidArgumentError("malformed mode");
    mode = mode * 8 + (c - '0');
  }
  entry.extra = fields[0] == "x";
  entry.mode = mode & 07777;
  entry.digest = std::string(fields[3]);
  entry.path = std::move(path);
  return entry;
}

}  // namespace

std::string Manifest::SourceDigest() const {
  Digester digester;
  for (const ManifestEntry& entry : entries) {
    if (entry.extra) continue;
    digester.Add(entry.path).Add(absl::StrCat(entry.mode, " ", entry.size)).Add(entry.digest);
  }
  return digester.Hex();
}

bool IsExcluded(absl::string_view relative_path,
                const std::vector<std::string>& exclude) {
  for (absl::string_view component : absl::StrSplit(relative_path, '/')) {
    std::string name(component);
    for (const std::string& pattern : exclude) {
      if (fnmatch(pattern.c_str(), name.c_str(), 0) == 0) return true;
    }
  }
  return false;
}

absl::StatusOr<Manifest> BuildManifest(const std::string& root,
                                       const std::vector<std::string>& exclude,
                                       DigestCache* cache) {
  struct stat st;
  if (stat(root.c_str(), &st) != 0) return ErrnoError("cannot sync from", root);
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot sync from ", root, ": not a directory"));
  }
  Manifest manifest;
  Fd dir(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return ErrnoError("cannot list", root);
  FP_RETURN_IF_ERROR(Walk(dir.get(), root, "", exclude, cache, &manifest.entries));
  SortEntries(&manifest.entries);
  return manifest;
}

absl::Status AddExtraFiles(const std::vector<ExtraFile>& extras,
                           Manifest* manifest) {
  std::map<std::string, ManifestEntry> by_path;
  for (ManifestEntry& entry : manifest->entries) by_path[entry.path] = std::move(entry);
  for (const ExtraFile& extra : extras) {
    FP_ASSIGN_OR_RETURN(ManifestEntry entry, EntryAt(extra.local_path, extra.path, /*extra=*/true));
    by_path[extra.path] = std::move(entry);
  }
  manifest->entries.clear();
  for (auto& [path, entry] : by_path) manifest->entries.push_back(std::move(entry));
  return absl::OkStatus();
}

std::string SerializeManifest(const Manifest& manifest) {
  std::string text;
  for (const ManifestEntry& entry : manifest.entries) {
    absl::StrAppend(&text, entry.extra ? "x" : "f", " ",
                    absl::StrFormat("%04o", entry.mode), " ", entry.size, " ",
                    entry.digest, " ", absl::CEscape(entry.path), "\n");
  }
  return text;
}

absl::StatusOr<Manifest> ParseManifest(absl::string_view text) {
  Manifest manifest;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    ++line_number;
    absl::StatusOr<ManifestEntry> entry = ParseLine(line);
    if (!entry.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "manifest line ", line_number, ": ", entry.status().message()));
    }
    manifest.entries.push_back(*std::move(entry));
  }
  SortEntries(&manifest.entries);
  // Paths are unique: a receiver indexes the entries by path.
  for (size_t i = 1; i < manifest.entries.size(); ++i) {
    if (manifest.entries[i].path == manifest.entries[i - 1].path) {
      return absl::InvalidArgumentError(
          absl::StrCat("manifest: \"", absl::CEscape(manifest.entries[i].path),
                       "\" is listed twice"));
    }
  }
  return manifest;
}

ManifestDiff DiffManifests(const Manifest& before, const Manifest& after) {
  std::map<absl::string_view, const ManifestEntry*> old_entries;
  for (const ManifestEntry& entry : before.entries) old_entries[entry.path] = &entry;
  ManifestDiff diff;
  for (const ManifestEntry& entry : after.entries) {
    auto it = old_entries.find(entry.path);
    if (it == old_entries.end() || !SameContent(*it->second, entry)) {
      diff.to_send.push_back(entry);
    }
    if (it != old_entries.end()) old_entries.erase(it);
  }
  for (const auto& [path, entry] : old_entries) diff.to_remove.emplace_back(path);
  return diff;
}

std::vector<std::string> FindTreeMismatches(const std::string& root,
                                            const Manifest& manifest) {
  std::vector<std::string> mismatches;
  for (const ManifestEntry& listed : manifest.entries) {
    absl::StatusOr<ManifestEntry> found =
        EntryAt(absl::StrCat(root, "/", listed.path), listed.path, listed.extra);
    if (!found.ok() || !SameContent(*found, listed)) mismatches.push_back(listed.path);
  }
  return mismatches;
}

}  // namespace fleetplan
