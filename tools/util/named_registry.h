#ifndef FLEETPLAN_TOOLS_UTIL_NAMED_REGISTRY_H_
#define FLEETPLAN_TOOLS_UTIL_NAMED_REGISTRY_H_

// A name -> object map for extension points whose plugins register at
// static initialisation (transports, transports' settings parsers). Not
// thread-safe: registration happens before main, lookups after.

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

template <typename T>
class NamedRegistry {
 public:
  // `kind` names what is registered in messages ("transport").
  explicit NamedRegistry(std::string kind) : kind_(std::move(kind)) {}

  // AlreadyExists when `name` is taken.
  absl::Status Register(const std::string& name, std::unique_ptr<T> value) {
    if (Get(name) != nullptr) {
      return absl::AlreadyExistsError(
          absl::StrCat(kind_, " \"", name, "\" is registered twice"));
    }
    entries_.emplace_back(name, std::move(value));
    return absl::OkStatus();
  }

  // The object registered as `name`, or nullptr.
  T* Get(absl::string_view name) const {
    for (const auto& entry : entries_) {
      if (entry.first == name) return entry.second.get();
    }
    return nullptr;
  }

  // Registered names, sorted.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& entry : entries_) names.push_back(entry.first);
    std::sort(names.begin(), names.end());
    return names;
  }

  // Puts `value` under `name` and returns what was there (null if nothing);
  // a null `value` removes the entry. For tests' scoped overrides.
  std::unique_ptr<T> Swap(const std::string& name, std::unique_ptr<T> value) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first != name) continue;
      std::unique_ptr<T> previous = std::move(it->second);
      if (value) {
        it->second = std::move(value);
      } else {
        entries_.erase(it);
      }
      return previous;
    }
    if (value) entries_.emplace_back(name, std::move(value));
    return nullptr;
  }

 private:
  std::string kind_;
  std::vector<std::pair<std::string, std::unique_ptr<T>>> entries_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_UTIL_NAMED_REGISTRY_H_
