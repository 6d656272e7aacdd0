#include "tools/process/exec_args.h"

#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

std::vector<std::string> MergeEnv(
    const std::vector<std::string>& base,
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> env;
  for (absl::string_view entry : base) {
    absl::string_view key = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& kv : overrides) replaced |= kv.first == key;
    if (!replaced) env.emplace_back(entry);
  }
  for (size_t i = 0; i < overrides.size(); ++i) {
    bool later = false;
    for (size_t j = i + 1; j < overrides.size(); ++j) {
      later |= overrides[j].first == overrides[i].first;
    }
    if (!later) env.push_back(overrides[i].first + "=" + overrides[i].second);
  }
  return env;
}

std::string SearchPath(const std::vector<std::string>& env) {
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const std::string& entry : env) {
    if (absl::StartsWith(entry, "PATH=")) path = entry.substr(5);
  }
  return path;
}

std::vector<char*> NullTerminated(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  // execve's prototype takes char* const*; it does not write through them.
  for (const std::string& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

absl::StatusOr<std::string> FindProgram(const std::string& name, const std::string& path) {
  auto executable = [](const std::string& file) {
    struct stat st;
    return stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           access(file.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    if (executable(name)) return name;
    return absl::NotFoundError(
        absl::StrCat("program \"", name, "\" does not exist or is not executable"));
  }
  for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", name);
    if (executable(candidate)) return candidate;
  }
  return absl::NotFoundError(
      absl::StrCat("program \"", name, "\" not found in PATH (", path, ")"));
}

}  // namespace fleetplan
