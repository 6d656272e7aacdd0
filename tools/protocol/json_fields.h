#ifndef FLEETPLAN_TOOLS_PROTOCOL_JSON_FIELDS_H_
#define FLEETPLAN_TOOLS_PROTOCOL_JSON_FIELDS_H_

// Reads the fields of one JSON object of a protocol document (job.json, a
// preflight request), each of one expected type, naming the document and
// the first field that is missing or wrong.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace fleetplan {

// InvalidArgument: `<document>: "<key>" <what>`.
absl::Status InvalidField(absl::string_view document, absl::string_view key,
                          absl::string_view what);

// Sets `*out` to `json` when it is an integer in the range of int.
bool JsonToInt(const nlohmann::json& json, int* out);

class JsonFields {
 public:
  // `json` must outlive this object.
  JsonFields(const nlohmann::json& json, absl::string_view document)
      : json_(json), document_(document) {}

  // Each sets `*out` from field `key`; InvalidArgument when it is missing,
  // of another type or out of range.
  absl::Status Get(const char* key, std::string* out) const;
  // An integer in the range of int.
  absl::Status Get(const char* key, int* out) const;
  // An integer in [min, max].
  absl::Status Get(const char* key, int min, int max, int* out) const;
  absl::Status Get(const char* key, uint64_t* out) const;
  absl::Status Get(const char* key, bool* out) const;
  absl::Status Get(const char* key, std::vector<int>* out) const;
  absl::Status Get(const char* key, std::vector<std::string>* out) const;
  // null: nullopt.
  absl::Status Get(const char* key, std::optional<int>* out) const;
  absl::Status Get(const char* key, std::optional<int64_t>* out) const;
  // A count (an integer >= 0) or null.
  absl::Status Get(const char* key, std::optional<uint64_t>* out) const;
  // A finite number >= 0, or null.
  absl::Status Get(const char* key, std::optional<double>* out) const;
  // An RFC 3339 time; null: InfinitePast.
  absl::Status Get(const char* key, absl::Time* out) const;
  // A number of seconds.
  absl::Status Get(const char* key, absl::Duration* out) const;

  // The field `key`, or nullptr when there is none.
  const nlohmann::json* Optional(const char* key) const;

 private:
  absl::Status Invalid(const char* key, absl::string_view what) const {
    return InvalidField(document_, key, what);
  }
  absl::Status Find(const char* key, const nlohmann::json** out) const;

  const nlohmann::json& json_;
  std::string document_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_JSON_FIELDS_H_
