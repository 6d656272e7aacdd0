#include "tools/process/exec_args.h"

#include "absl/strings/match.h"
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

}  // namespace fleetplan
