#include "plugins/ssh/sftp_wire.h"

#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace fleetplan {
namespace sftp {
namespace {

TEST(SftpWireTest, APacketIsItsLengthTypeAndBigEndianFields) {
  std::string packet =
      PacketWriter(kOpen).U32(7).String("/w/a").U32(kOpenWrite | kOpenCreate).Attrs(0644).Finish();
  // length, type, id 7, "/w/a", flags, attrs (flag, permissions)
  const std::string expected("\x00\x00\x00\x19"  // 25 bytes follow
                             "\x03"
                             "\x00\x00\x00\x07"
                             "\x00\x00\x00\x04/w/a"
                             "\x00\x00\x00\x0a"
                             "\x00\x00\x00\x04"
                             "\x00\x00\x01\xa4",
                             29);
  EXPECT_EQ(packet, expected);
  EXPECT_EQ(PeekLength(packet), 25u);
}

TEST(SftpWireTest, NoAttrsIsAZeroFlagWord) {
  std::string packet = PacketWriter(kMkdir).U32(1).String("d").Attrs(std::nullopt).Finish();
  EXPECT_EQ(packet.substr(packet.size() - 4), std::string("\x00\x00\x00\x00", 4));
}

TEST(SftpWireTest, StringSpaceIsFilledInPlace) {
  PacketWriter writer(kWrite);
  writer.U32(3).String("h").U64(1ULL << 40);
  char* space = writer.StringSpace(5);
  std::memcpy(space, "bytes", 5);
  std::string packet = writer.Finish();
  PacketReader reader(absl::string_view(packet).substr(4));
  EXPECT_EQ(reader.U8(), kWrite);
  EXPECT_EQ(reader.U32(), 3u);
  EXPECT_EQ(reader.String(), "h");
  EXPECT_EQ(reader.U64(), 1ULL << 40);
  EXPECT_EQ(reader.String(), "bytes");
  EXPECT_TRUE(reader.ok());
}

TEST(SftpWireTest, ReadingPastTheEndIsNotOk) {
  // A status reply cut short: id, then half of the code.
  std::string body("\x65\x00\x00\x00\x09\x00\x00", 7);
  PacketReader reader(body);
  EXPECT_EQ(reader.U8(), kStatus);
  EXPECT_EQ(reader.U32(), 9u);
  EXPECT_TRUE(reader.ok());
  reader.U32();
  EXPECT_FALSE(reader.ok());
  // A string whose length runs past the packet.
  PacketReader truncated(std::string("\x00\x00\x00\x09" "abc", 7));
  truncated.String();
  EXPECT_FALSE(truncated.ok());
}

}  // namespace
}  // namespace sftp
}  // namespace fleetplan
