#include "tools/plan/json_writer.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace fleetplan {
namespace {

constexpr absl::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD

// Length of the valid UTF-8 sequence at the start of `text` (non-empty,
// first byte >= 0x80), or 0 when it is not one.
size_t Utf8SequenceLength(absl::string_view text) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(0);
  size_t length;
  unsigned char low = 0x80, high = 0xbf;  // range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;  // no UTF-16 surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (text.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  }
  return length;
}

void AppendEscape(unsigned char c, std::string* out) {
  switch (c) {
    case '"': out->append("\\\""); return;
    case '\\': out->append("\\\\"); return;
    case '\b': out->append("\\b"); return;
    case '\f': out->append("\\f"); return;
    case '\n': out->append("\\n"); return;
    case '\r': out->append("\\r"); return;
    case '\t': out->append("\\t"); return;
    default: {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
      out->append(buffer);
    }
  }
}

}  // namespace

void AppendJsonString(absl::string_view value, std::string* out) {
  out->push_back('"');
  size_t plain_start = 0;
  for (size_t i = 0; i < value.size();) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    // Copy the run of plain bytes in one go; it is most of the text.
    out->append(value.data() + plain_start, i - plain_start);
    if (c < 0x80) {
      AppendEscape(c, out);
      ++i;
    } else if (size_t length = Utf8SequenceLength(value.substr(i))) {
      out->append(value.data() + i, length);
      i += length;
    } else {
      out->append(kReplacement.data(), kReplacement.size());
      ++i;
    }
    plain_start = i;
  }
  out->append(value.data() + plain_start, value.size() - plain_start);
  out->push_back('"');
}

void JsonWriter::NewLine() {
  out_->push_back('\n');
  out_->append(2 * depth_, ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ == 0) return;
  if (!first_in_container_) out_->push_back(',');
  first_in_container_ = false;
  NewLine();
}

void JsonWriter::Open(char bracket) {
  BeforeValue();
  out_->push_back(bracket);
  ++depth_;
  first_in_container_ = true;
}

void JsonWriter::Close(char bracket) {
  --depth_;
  // An empty container stays on one line: `[]`, `{}`.
  if (!first_in_container_) NewLine();
  out_->push_back(bracket);
  first_in_container_ = false;
}

void JsonWriter::Key(absl::string_view key) {
  BeforeValue();
  AppendJsonString(key, out_);
  out_->append(": ");
  after_key_ = true;
}

void JsonWriter::String(absl::string_view value) {
  BeforeValue();
  AppendJsonString(value, out_);
}

void JsonWriter::Int(long long value) {
  BeforeValue();
  absl::StrAppend(out_, value);
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  out_->append(value ? "true" : "false");
}

}  // namespace fleetplan
