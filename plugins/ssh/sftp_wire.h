#ifndef FLEETPLAN_PLUGINS_SSH_SFTP_WIRE_H_
#define FLEETPLAN_PLUGINS_SSH_SFTP_WIRE_H_

// SFTP version 3 packets (draft-ietf-secsh-filexfer-02) as bytes: the
// subset the ssh transport sends and the replies it reads. Pure encoding;
// sftp_client.h does the I/O. libssh 0.10's own SFTP API has no
// posix-rename and no pipelined writes, which atomic replacement and fast
// uploads need.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace fleetplan {
namespace sftp {

enum PacketType : uint8_t {
  kInit = 1,
  kVersion = 2,
  kOpen = 3,
  kClose = 4,
  kRead = 5,
  kWrite = 6,
  kFsetstat = 10,
  kRemove = 13,
  kMkdir = 14,
  kRename = 18,
  kStatus = 101,
  kHandle = 102,
  kData = 103,
  kExtended = 200,
};

enum OpenFlags : uint32_t {
  kOpenRead = 0x1,
  kOpenWrite = 0x2,
  kOpenCreate = 0x8,
  kOpenTruncate = 0x10,
};

enum StatusCode : uint32_t {
  kOk = 0,
  kEof = 1,
  kNoSuchFile = 2,
  kPermissionDenied = 3,
  kFailure = 4,
};

constexpr uint32_t kAttrPermissions = 0x4;

// Builds one packet: the length prefix is filled in by Finish().
class PacketWriter {
 public:
  explicit PacketWriter(PacketType type);
  PacketWriter& U32(uint32_t value);
  PacketWriter& U64(uint64_t value);
  PacketWriter& String(absl::string_view value);
  // Appends a string field of `size` bytes and returns where they go, for
  // the caller to fill in place (a file read straight into the packet).
  // Valid until the next call on this writer.
  char* StringSpace(uint32_t size);
  // ATTRS with only the permission bits, or with nothing when nullopt.
  PacketWriter& Attrs(std::optional<uint32_t> permissions);
  // The packet with its length prefix.
  std::string Finish();

 private:
  std::string bytes_;
};

// Reads fields of one packet's body; any read past the end sets !ok().
class PacketReader {
 public:
  explicit PacketReader(absl::string_view body) : rest_(body) {}
  uint8_t U8();
  uint32_t U32();
  uint64_t U64();
  absl::string_view String();
  bool ok() const { return ok_; }

 private:
  absl::string_view rest_;
  bool ok_ = true;
};

// The 4-byte big-endian length prefix at the start of `bytes`.
uint32_t PeekLength(absl::string_view bytes);

}  // namespace sftp
}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SSH_SFTP_WIRE_H_
