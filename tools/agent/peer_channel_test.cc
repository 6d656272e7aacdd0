#include "tools/agent/peer_channel.h"

#include <sys/socket.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(100);

TEST(PeerChannelTest, CarriesJsonLinesBothWaysAndNotesWhenHeard) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  PeerChannel left(Fd(pair[0]), kT0), right(Fd(pair[1]), kT0);
  left.Send({{"t", "hello"}, {"node", "b"}});
  left.Send({{"t", "hb"}});
  std::vector<nlohmann::json> got = right.Receive(kT0 + absl::Seconds(2));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0]["node"], "b");
  EXPECT_EQ(got[1]["t"], "hb");
  EXPECT_EQ(right.last_heard(), kT0 + absl::Seconds(2));
  EXPECT_EQ(left.last_heard(), kT0);
  EXPECT_TRUE(right.Receive(kT0 + absl::Seconds(3)).empty());
  EXPECT_EQ(right.last_heard(), kT0 + absl::Seconds(2)) << "nothing came";
}

TEST(PeerChannelTest, APartialLineWaitsForItsEnd) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  PeerChannel channel(Fd(pair[1]), kT0);
  ASSERT_EQ(write(pair[0], "{\"t\":", 5), 5);
  EXPECT_TRUE(channel.Receive(kT0).empty());
  ASSERT_EQ(write(pair[0], "\"hb\"}\n", 6), 6);
  EXPECT_EQ(channel.Receive(kT0).size(), 1u);
  close(pair[0]);
}

TEST(PeerChannelTest, EndOfFileOrGarbageCloses) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  PeerChannel channel(Fd(pair[1]), kT0);
  ASSERT_EQ(write(pair[0], "not json\n", 9), 9);
  channel.Receive(kT0);
  EXPECT_TRUE(channel.closed());

  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  PeerChannel other(Fd(pair[1]), kT0);
  close(pair[0]);
  other.Receive(kT0);
  EXPECT_TRUE(other.closed());
}

}  // namespace
}  // namespace fleetplan
