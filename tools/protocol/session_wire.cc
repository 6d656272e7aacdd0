#include "tools/protocol/session_wire.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fleetplan {
namespace {

void AppendLength(std::string* out, uint32_t length) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(length >> shift));
}

uint32_t LengthAt(absl::string_view bytes, size_t at) {
  uint32_t length = 0;
  for (size_t i = 0; i < 4; ++i) length = (length << 8) | static_cast<uint8_t>(bytes[at + i]);
  return length;
}

}  // namespace

std::string EncodeFrame(FrameType type, const std::vector<std::string>& fields) {
  uint32_t payload = 0;
  for (const std::string& field : fields) payload += 4 + field.size();
  std::string out;
  out.reserve(5 + payload);
  out.push_back(static_cast<char>(type));
  AppendLength(&out, payload);
  for (const std::string& field : fields) {
    AppendLength(&out, field.size());
    out.append(field);
  }
  return out;
}

absl::StatusOr<std::optional<Frame>> FrameReader::Next() {
  absl::string_view rest = absl::string_view(buffer_).substr(offset_);
  if (rest.size() < 5) return std::nullopt;
  uint32_t payload = LengthAt(rest, 1);
  if (payload > kMaxSessionFrame) {
    return absl::DataLossError(absl::StrCat("a frame of ", payload, " bytes (at most ",
                                            kMaxSessionFrame, "): the stream is broken"));
  }
  if (rest.size() < 5 + payload) return std::nullopt;
  Frame frame;
  frame.type = static_cast<FrameType>(rest[0]);
  absl::string_view fields = rest.substr(5, payload);
  while (!fields.empty()) {
    if (fields.size() < 4 || fields.size() - 4 < LengthAt(fields, 0)) {
      return absl::DataLossError("a frame whose fields overrun it: the stream is broken");
    }
    uint32_t length = LengthAt(fields, 0);
    frame.fields.emplace_back(fields.substr(4, length));
    fields.remove_prefix(4 + length);
  }
  offset_ += 5 + payload;
  // Keep the buffer from growing with everything ever received.
  if (offset_ == buffer_.size() || offset_ > (1u << 20)) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  return frame;
}

absl::StatusOr<uint64_t> FrameNumber(const Frame& frame, size_t index, absl::string_view what) {
  uint64_t number = 0;
  if (index >= frame.fields.size() || !absl::SimpleAtoi(frame.fields[index], &number)) {
    return absl::InvalidArgumentError(absl::StrCat("a session frame without a number for ", what));
  }
  return number;
}

}  // namespace fleetplan
