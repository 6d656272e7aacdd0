#include "tools/hold/hold_folder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/util/digest.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] == '/' ? std::string(value) : fallback;
}

// Makes `path` (and its parents, 0700) unless it exists.
absl::Status MakeFolders(const std::string& path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    std::string prefix = path.substr(0, slash);
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot make ", prefix, ": ", std::strerror(errno)));
    }
    if (slash == std::string::npos) return absl::OkStatus();
  }
}

}  // namespace

absl::Status CheckPrivateFolder(const std::string& path, uid_t uid) {
  struct stat info;
  if (lstat(path.c_str(), &info) != 0) {
    return absl::PermissionDeniedError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  if (!S_ISDIR(info.st_mode)) {
    return absl::PermissionDeniedError(absl::StrCat(path, " is not a folder"));
  }
  if (info.st_uid != uid) {
    return absl::PermissionDeniedError(
        absl::StrCat(path, " belongs to uid ", info.st_uid, ", not to uid ", uid));
  }
  if ((info.st_mode & 077) != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        path, " may be entered by others (mode ", absl::StrFormat("%03o", info.st_mode & 0777), "; expected 700)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> HoldFolder() {
  std::string home = EnvOr("HOME", "");
  std::string cache = EnvOr("XDG_CACHE_HOME", home.empty() ? "" : home + "/.cache");
  std::string runtime = EnvOr("XDG_RUNTIME_DIR", "");
  std::string folder = !runtime.empty() ? runtime + "/fleetplan"
                       : !cache.empty() ? cache + "/fleetplan/hold"
                                        : "";
  if (folder.empty()) {
    return absl::FailedPreconditionError("neither XDG_RUNTIME_DIR nor HOME is set");
  }
  FP_RETURN_IF_ERROR(MakeFolders(folder));
  FP_RETURN_IF_ERROR(CheckPrivateFolder(folder, geteuid()));
  return folder;
}

std::string HoldSet::Identity(absl::string_view wire) const {
  Digester digest;
  digest.Add(wire);
  for (const auto& [node, key] : nodes) digest.Add(node).Add(key.identity);
  return digest.Hex();
}

absl::Duration HoldSet::Persist() const {
  absl::Duration longest = absl::ZeroDuration();
  for (const auto& [node, key] : nodes) longest = std::max(longest, key.persist);
  return longest;
}

HoldSet HoldSetOf(const ClusterSpec& spec, const TransportOptions& options) {
  HoldSet set;
  for (const NodeSpec& node : spec.nodes) {
    absl::StatusOr<Transport*> transport = TransportRegistry::Global().Find(node.transport);
    if (!transport.ok()) continue;
    if (std::optional<HoldKey> key = (*transport)->Holding(spec, node, options)) {
      set.nodes[node.name] = *std::move(key);
    }
  }
  return set;
}

std::string HoldSocketPath(const std::string& folder, const std::string& identity) {
  return absl::StrCat(folder, "/", identity, ".sock");
}

std::string HoldLogPath(const std::string& folder, const std::string& identity) {
  return absl::StrCat(folder, "/", identity, ".log");
}

std::string HoldLockPath(const std::string& folder, const std::string& identity) {
  return absl::StrCat(folder, "/", identity, ".lock");
}

}  // namespace fleetplan
