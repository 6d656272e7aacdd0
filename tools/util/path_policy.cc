#include "tools/util/path_policy.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fleetplan {
namespace {

// Linux's NAME_MAX and PATH_MAX less its NUL: longer fails in the kernel
// anyway, with a message that names no path.
constexpr size_t kMaxPart = 255;
constexpr size_t kMaxPath = 4095;

// `path` without its trailing slashes, but "/" for a path of slashes only.
absl::string_view WithoutTrailingSlashes(absl::string_view path) {
  while (path.size() > 1 && absl::EndsWith(path, "/")) path.remove_suffix(1);
  return path;
}

// `path` is escaped: it may come from a peer and hold any bytes.
absl::Status Refuse(absl::string_view path, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("path \"", absl::CHexEscape(path), "\" ", why));
}

}  // namespace

std::string NormalizeAbsolutePath(absl::string_view path) {
  std::vector<absl::string_view> parts;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  return absl::StrCat("/", absl::StrJoin(parts, "/"));
}

bool IsCleanAbsolutePath(absl::string_view path) {
  if (path.empty() || path.front() != '/') return false;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "." || part == "..") return false;
  }
  return true;
}

std::string Dirname(absl::string_view path) {
  path = WithoutTrailingSlashes(path);
  size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return ".";
  path = WithoutTrailingSlashes(path.substr(0, slash + 1));
  return std::string(path);
}

std::string Basename(absl::string_view path) {
  path = WithoutTrailingSlashes(path);
  if (path == "/") return "/";
  return std::string(path.substr(path.rfind('/') + 1));
}

std::string HiddenBeside(absl::string_view path, absl::string_view suffix) {
  size_t slash = path.rfind('/');
  absl::string_view dir = slash == absl::string_view::npos ? "" : path.substr(0, slash + 1);
  absl::string_view base = path.substr(slash == absl::string_view::npos ? 0 : slash + 1);
  return absl::StrCat(dir, ".", base, suffix);
}

std::string PathUnder(absl::string_view dir, absl::string_view relative) {
  dir = WithoutTrailingSlashes(dir);
  relative = absl::StripPrefix(relative, "./");
  if (dir == "/") return absl::StrCat("/", relative);
  return absl::StrCat(dir, "/", relative);
}

absl::Status CheckStaysUnderRoot(absl::string_view root, absl::string_view path) {
  if (path.empty() || path[0] == '/') {
    return Refuse(path, absl::StrCat("must be relative to ", root));
  }
  if (absl::StrContains(path, absl::string_view("\0", 1))) {
    return Refuse(path, absl::StrCat("holds a NUL byte (under ", root, ")"));
  }
  if (path.size() > kMaxPath) {
    return Refuse(path, absl::StrCat("is over ", kMaxPath, " bytes (under ", root, ")"));
  }
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "..") return Refuse(path, absl::StrCat("climbs out of ", root, " through \"..\""));
    // "a//b", "a/" and "./a" name what "a/b" and "a" name: one spelling
    // per file, so a manifest cannot list one file twice.
    if (part.empty() || part == ".") {
      return Refuse(path, absl::StrCat("has an empty or \".\" part (under ", root, ")"));
    }
    if (part.size() > kMaxPart) {
      return Refuse(path, absl::StrCat("has a part over ", kMaxPart, " bytes (under ", root, ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> JoinUnderRoot(absl::string_view root, absl::string_view path) {
  if (absl::Status check = CheckStaysUnderRoot(root, path); !check.ok()) return check;
  if (root.empty() || absl::EndsWith(root, "/")) return absl::StrCat(root, path);
  return absl::StrCat(root, "/", path);
}

}  // namespace fleetplan
