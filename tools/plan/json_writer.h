#ifndef FLEETPLAN_TOOLS_PLAN_JSON_WRITER_H_
#define FLEETPLAN_TOOLS_PLAN_JSON_WRITER_H_

// A streaming writer for pretty JSON laid out exactly as nlohmann::json's
// dump(2) lays it out, without building a document first: plans of
// thousands of nodes render several times faster this way. Callers write
// object keys in sorted order, as nlohmann::json stores them.

#include <string>

#include "absl/strings/string_view.h"

namespace fleetplan {

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}

  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }

  // Starts a member of the current object; its value is written next.
  void Key(absl::string_view key);

  void String(absl::string_view value);
  void Int(long long value);
  void Bool(bool value);

  // Key(key) then the value.
  void Member(absl::string_view key, absl::string_view value) {
    Key(key);
    String(value);
  }
  void Member(absl::string_view key, int value) {
    Key(key);
    Int(value);
  }

 private:
  void Open(char bracket);
  void Close(char bracket);
  // Before a value: a comma and newline unless first in its container.
  void BeforeValue();
  void NewLine();

  std::string* out_;
  int depth_ = 0;
  bool first_in_container_ = true;
  bool after_key_ = false;
};

// Appends `value` as a JSON string (quoted, escaped like nlohmann::json with
// ensure_ascii off). Bytes that are not valid UTF-8 become U+FFFD.
void AppendJsonString(absl::string_view value, std::string* out);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PLAN_JSON_WRITER_H_
