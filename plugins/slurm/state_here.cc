#include "plugins/slurm/state_here.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/process/fd.h"
#include "tools/process/files.h"

namespace fleetplan {
namespace {

constexpr char kBelowWorkdir[] = "/.fleetplan/nodes/";
// A state folder holds a few small files; more than this is not one.
constexpr size_t kMaxFiles = 1000;

absl::Status NotHere(const std::string& folder, absl::string_view why) {
  return absl::FailedPreconditionError(
      absl::StrCat(folder, " is not the nodes' state folder here: ", why));
}

// Every regular file under `dir` (its path is `path`) into `files`, as
// SnapshotCommand's `find` lists them: the folder's logs/ left out but for
// logs/job.json. False when the folder cannot be listed whole.
bool ReadTree(int dir, const std::string& path, bool top,
              std::map<std::string, std::string>* files) {
  std::vector<std::string> names;
  if (!ListFolderAt(dir, &names)) return false;
  std::vector<std::string> folders;
  for (const std::string& name : names) {
    struct stat st;
    if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    if (S_ISDIR(st.st_mode)) {
      folders.push_back(name);
    } else if (S_ISREG(st.st_mode)) {
      std::optional<std::string> content = ReadRegularFileAt(dir, name.c_str());
      if (!content.has_value() || files->size() >= kMaxFiles) return false;
      (*files)[absl::StrCat(path, "/", name)] = *std::move(content);
    }
  }
  for (const std::string& name : folders) {
    Fd sub(openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (sub.get() < 0) return false;
    if (top && name == "logs") {
      if (std::optional<std::string> job = ReadRegularFileAt(sub.get(), "job.json")) {
        (*files)[absl::StrCat(path, "/logs/job.json")] = *std::move(job);
      }
      continue;
    }
    if (!ReadTree(sub.get(), absl::StrCat(path, "/", name), false, files)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<StateSnapshot> ReadStateFolderHere(const std::string& folder,
                                                  const std::string& job_id) {
  size_t below = folder.find(kBelowWorkdir);
  if (below == std::string::npos || job_id.empty()) return NotHere(folder, "no node-state folder");
  std::string workdir = below == 0 ? "/" : folder.substr(0, below);
  Fd dir(open(workdir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return NotHere(folder, absl::StrCat(workdir, ": ", std::strerror(errno)));
  // .fleetplan, nodes, the node's own: none of them a link.
  for (absl::string_view part :
       absl::StrSplit(absl::string_view(folder).substr(below + 1), '/', absl::SkipEmpty())) {
    std::string name(part);
    Fd next(openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) return NotHere(folder, absl::StrCat(name, ": ", std::strerror(errno)));
    dir = std::move(next);
  }
  struct stat st;
  if (fstat(dir.get(), &st) != 0) return NotHere(folder, std::strerror(errno));
  if (st.st_uid != geteuid()) return NotHere(folder, "owned by another user");
  if ((st.st_mode & 077) != 0) return NotHere(folder, "open to other users");
  std::optional<std::string> mark = ReadRegularFileAt(dir.get(), kAllocationMarkName);
  if (!mark.has_value()) return NotHere(folder, "no allocation's mark");
  if (absl::StripTrailingAsciiWhitespace(*mark) != job_id) {
    return NotHere(folder, absl::StrCat("marked by job ",
                                        absl::StripTrailingAsciiWhitespace(*mark), ", not ",
                                        job_id));
  }
  std::map<std::string, std::string> files;
  if (!ReadTree(dir.get(), folder, true, &files)) return NotHere(folder, "cannot read it whole");
  return StateSnapshot::Of(folder, std::move(files));
}

}  // namespace fleetplan
