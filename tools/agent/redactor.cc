#include "tools/agent/redactor.h"

#include <stdlib.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fleetplan {
namespace {

std::vector<std::string> ListedNames(absl::string_view names_var) {
  const char* names = getenv(std::string(names_var).c_str());
  if (names == nullptr) return {};
  return absl::StrSplit(names, ',', absl::SkipEmpty());
}

}  // namespace

Redactor::Redactor(std::vector<std::string> values) {
  for (std::string& value : values) {
    if (!value.empty()) values_.push_back(std::move(value));
  }
  std::sort(values_.begin(), values_.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string Redactor::Feed(absl::string_view chunk) {
  if (values_.empty()) return std::string(chunk);
  pending_.append(chunk.data(), chunk.size());
  absl::string_view rest = pending_;
  std::string out;
  size_t copied = 0;  // of `rest`, what is in `out` already
  size_t at = 0;
  while (at < rest.size()) {
    absl::string_view here = rest.substr(at);
    bool matched = false, maybe = false;
    for (const std::string& value : values_) {
      if (here.size() >= value.size()) {
        if (here.compare(0, value.size(), value) == 0) {
          absl::StrAppend(&out, rest.substr(copied, at - copied), kRedacted);
          at += value.size();
          copied = at;
          matched = true;
          break;
        }
      } else if (value.compare(0, here.size(), here.data(), here.size()) == 0) {
        maybe = true;  // the output so far ends with this value's beginning
      }
    }
    if (matched) continue;
    if (maybe) break;
    ++at;
  }
  absl::StrAppend(&out, rest.substr(copied, at - copied));
  pending_.erase(0, at);
  return out;
}

std::string Redactor::Flush() {
  std::string rest;
  rest.swap(pending_);
  return rest;
}

std::vector<std::string> SecretValuesFromEnvironment(absl::string_view names_var) {
  std::vector<std::string> values;
  for (const std::string& name : ListedNames(names_var)) {
    if (const char* value = getenv(name.c_str())) values.push_back(value);
  }
  return values;
}

std::vector<std::string> MissingSecrets(absl::string_view names_var) {
  std::vector<std::string> missing;
  for (const std::string& name : ListedNames(names_var)) {
    if (getenv(name.c_str()) == nullptr) missing.push_back(name);
  }
  return missing;
}

}  // namespace fleetplan
