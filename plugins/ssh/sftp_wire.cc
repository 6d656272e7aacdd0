#include "plugins/ssh/sftp_wire.h"

namespace fleetplan {
namespace sftp {
namespace {

void AppendU32(std::string* out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(value >> shift));
}

}  // namespace

PacketWriter::PacketWriter(PacketType type) {
  bytes_.assign(4, '\0');  // length, filled in by Finish()
  bytes_.push_back(static_cast<char>(type));
}

PacketWriter& PacketWriter::U32(uint32_t value) {
  AppendU32(&bytes_, value);
  return *this;
}

PacketWriter& PacketWriter::U64(uint64_t value) {
  AppendU32(&bytes_, static_cast<uint32_t>(value >> 32));
  AppendU32(&bytes_, static_cast<uint32_t>(value));
  return *this;
}

PacketWriter& PacketWriter::String(absl::string_view value) {
  AppendU32(&bytes_, static_cast<uint32_t>(value.size()));
  bytes_.append(value.data(), value.size());
  return *this;
}

char* PacketWriter::StringSpace(uint32_t size) {
  AppendU32(&bytes_, size);
  bytes_.resize(bytes_.size() + size);
  return bytes_.data() + bytes_.size() - size;
}

PacketWriter& PacketWriter::Attrs(std::optional<uint32_t> permissions) {
  if (!permissions.has_value()) return U32(0);
  return U32(kAttrPermissions).U32(*permissions);
}

std::string PacketWriter::Finish() {
  uint32_t length = static_cast<uint32_t>(bytes_.size() - 4);
  std::string prefix;
  AppendU32(&prefix, length);
  bytes_.replace(0, 4, prefix);
  return std::move(bytes_);
}

uint32_t PeekLength(absl::string_view bytes) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

uint8_t PacketReader::U8() {
  if (rest_.empty()) {
    ok_ = false;
    return 0;
  }
  uint8_t value = static_cast<uint8_t>(rest_[0]);
  rest_.remove_prefix(1);
  return value;
}

uint32_t PacketReader::U32() {
  if (rest_.size() < 4) {
    ok_ = false;
    rest_ = {};
    return 0;
  }
  uint32_t value = PeekLength(rest_);
  rest_.remove_prefix(4);
  return value;
}

uint64_t PacketReader::U64() {
  uint64_t high = U32();
  return (high << 32) | U32();
}

absl::string_view PacketReader::String() {
  uint32_t size = U32();
  if (!ok_ || rest_.size() < size) {
    ok_ = false;
    rest_ = {};
    return {};
  }
  absl::string_view value = rest_.substr(0, size);
  rest_.remove_prefix(size);
  return value;
}

}  // namespace sftp
}  // namespace fleetplan
