#include "tools/protocol/json_fields.h"

#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "tools/util/status_macros.h"

namespace fleetplan {

absl::Status InvalidField(absl::string_view document, absl::string_view key,
                          absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(document, ": \"", key, "\" ", what));
}

bool JsonToInt(const nlohmann::json& json, int* out) {
  // get<int>() would wrap a larger number around without a word.
  if (json.is_number_unsigned()) {
    uint64_t value = json.get<uint64_t>();
    if (value > static_cast<uint64_t>(std::numeric_limits<int>::max())) return false;
    *out = static_cast<int>(value);
    return true;
  }
  if (!json.is_number_integer()) return false;
  int64_t value = json.get<int64_t>();
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
    return false;
  }
  *out = static_cast<int>(value);
  return true;
}

absl::Status JsonFields::Find(const char* key, const nlohmann::json** out) const {
  *out = Optional(key);
  return *out == nullptr ? Invalid(key, "is missing") : absl::OkStatus();
}

const nlohmann::json* JsonFields::Optional(const char* key) const {
  auto it = json_.find(key);
  return it == json_.end() ? nullptr : &*it;
}

absl::Status JsonFields::Get(const char* key, std::string* out) const {
  const nlohmann::json* value;
  FP_RETURN_IF_ERROR(Find(key, &value));
  if (!value->is_string()) return Invalid(key, "is not a string");
  *out = value->get<std::string>();
  return absl::OkStatus();
}

absl::Status JsonFields::Get(const char* key, int* out) const {
  const nlohmann::json* value;
  FP_RETURN_IF_ERROR(Find(key, &value));
  if (!JsonToInt(*value, out)) return Invalid(key, "is not an integer in the range of int");
  return absl::OkStatus();
}

absl::Status JsonFields::Get(const char* key, int min, int max, int* out) const {
  int value;
  FP_RETURN_IF_ERROR(Get(key, &value));
  if (value < min || value > max) {
    return Invalid(key, absl::StrCat("is ", value, ", not in ", min, "..", max));
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status JsonFields::Get(const char* key, uint64_t* out) const {
  const nlohmann::json* value;
  FP_RETURN_IF_ERROR(Find(key, &value));
  if (!value->is_number_unsigned()) return Invalid(key, "is not a count");
  *out = value->get<uint64_t>();
  return absl::OkStatus();
}

absl::Status JsonFields::Get(const char* key, bool* out) const {
  const nlohmann::json* value;
  FP_RETURN_IF_ERROR(Find(key, &value));
  if (!value->is_boolean()) return Invalid(key, "is not true or false");
  *out = value->get<bool>();
  return absl::OkStatus();
}

absl::Status JsonFields::Get(const char* key, std::vector<int>* out) const {
  const nlohmann::json* value;
  FP_RETURN_IF_ERROR(Find(key, &value));
  if (!value->is_array()) return Invalid(key, "is not a list of integers");
  out->clear();
  for (const nlohmann::json& item : *value) {
    int number;
    if (!JsonToInt(item, &number)) return Invalid(key, "is not a list of integers");
    out->push_back(number);
  }
  return absl::OkStatus();
}

absl::Status JsonFields::Get(const char* key, std::vector<std::string>* out) const {
  const nlohmann::json* value;
  FP_RETURN_IF_ERROR(Find(key, &value));
  if (!value->is_array()) return Invalid(key, "is not a list of strings");
  out->clear();
  for (const nlohmann::json& item : *value) {
    if (!item.is_string()) return Invalid(key, "is not a list of strings");
    out->push_back(item.get<std::string>());
  }
  return absl::OkStatus();
}

absl::Status JsonFields::Get(const char* key, std::optional<int>* out) const {
  const nlohmann::json* value;
  FP_RETURN_IF_ERROR(Find(key, &value));
  if (value->is_null()) {
    out->reset();
    return absl::OkStatus();
  }
  int number;
  if (!JsonToInt(*value, &number)) return Invalid(key, "is not an integer or null");
  *out = number;
  return absl::OkStatus();
}

absl::Status JsonFields::Get(const char* key, std::optional<int64_t>* out) const {
  const nlohmann::json* value;
  FP_RETURN_IF_ERROR(Find(key, &value));
  if (value->is_null()) {
    out->reset();
    return absl::OkStatus();
  }
  if (value->is_number_unsigned() &&
      value->get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    *out = static_cast<int64_t>(value->get<uint64_t>());
  } else if (value->is_number_integer() && !value->is_number_unsigned()) {
    *out = value->get<int64_t>();
  } else {
    return Invalid(key, "is not a 64-bit integer or null");
  }
  return absl::OkStatus();
}

absl::Status JsonFields::Get(const char* key, std::optional<uint64_t>* out) const {
  const nlohmann::json* value;
  FP_RETURN_IF_ERROR(Find(key, &value));
  if (value->is_null()) {
    out->reset();
    return absl::OkStatus();
  }
  if (!value->is_number_unsigned()) return Invalid(key, "is not a count or null");
  *out = value->get<uint64_t>();
  return absl::OkStatus();
}

absl::Status JsonFields::Get(const char* key, std::optional<double>* out) const {
  const nlohmann::json* value;
  FP_RETURN_IF_ERROR(Find(key, &value));
  if (value->is_null()) {
    out->reset();
    return absl::OkStatus();
  }
  // nlohmann writes NaN and infinity as null, so neither arrives here.
  if (!value->is_number() || value->get<double>() < 0) {
    return Invalid(key, "is not a number >= 0 or null");
  }
  *out = value->get<double>();
  return absl::OkStatus();
}

absl::Status JsonFields::Get(const char* key, absl::Time* out) const {
  const nlohmann::json* value;
  FP_RETURN_IF_ERROR(Find(key, &value));
  if (value->is_null()) {
    *out = absl::InfinitePast();
    return absl::OkStatus();
  }
  std::string error;
  if (!value->is_string() ||
      !absl::ParseTime(absl::RFC3339_full, value->get<std::string>(), out, &error)) {
    return Invalid(key, "is not an RFC 3339 time or null");
  }
  return absl::OkStatus();
}

absl::Status JsonFields::Get(const char* key, absl::Duration* out) const {
  const nlohmann::json* value;
  FP_RETURN_IF_ERROR(Find(key, &value));
  if (!value->is_number()) return Invalid(key, "is not a number of seconds");
  *out = absl::Seconds(value->get<double>());
  return absl::OkStatus();
}

}  // namespace fleetplan
