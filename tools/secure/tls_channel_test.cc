#include "tools/secure/tls_channel.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <string>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"
#include "tools/secure/testing.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

struct Pair {
  std::unique_ptr<TlsSocket> client;
  std::unique_ptr<TlsSocket> server;
};

Pair Connected(const JobKey& client_key, const JobKey& server_key,
               absl::string_view client_purpose = kSupervisionPurpose,
               absl::string_view server_purpose = kSupervisionPurpose) {
  int fds[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  auto client_end = TlsEndpoint::Make(TlsEndpoint::Side::kClient, client_key, client_purpose);
  auto server_end = TlsEndpoint::Make(TlsEndpoint::Side::kServer, server_key, server_purpose);
  EXPECT_THAT(client_end, IsOk());
  EXPECT_THAT(server_end, IsOk());
  Pair pair;
  pair.client = *TlsSocket::Make(*client_end, fds[0]);
  pair.server = *TlsSocket::Make(*server_end, fds[1]);
  return pair;
}

// Both handshakes at once; the two statuses.
std::pair<absl::Status, absl::Status> Handshake(Pair& pair) {
  absl::Time deadline = absl::Now() + absl::Seconds(5);
  auto server = std::async(std::launch::async, [&] { return pair.server->HandshakeBy(deadline); });
  absl::Status client = pair.client->HandshakeBy(deadline);
  if (!client.ok()) shutdown(pair.client->fd(), SHUT_RDWR);  // the server's read ends
  return {client, server.get()};
}

TEST(TlsChannelTest, TheSameKeyConnectsAndCarriesBytesBothWays) {
  Pair pair = Connected(TestJobKey(7), TestJobKey(7));
  auto [client, server] = Handshake(pair);
  ASSERT_THAT(client, IsOk());
  ASSERT_THAT(server, IsOk());
  ASSERT_THAT(pair.client->SendAll("hello server\nrest"), IsOk());
  EXPECT_THAT(pair.server->ReceiveLine(100), IsOkAndHolds(std::string("hello server")));
  char rest[4];
  ASSERT_THAT(pair.server->ReceiveExactly(rest, 4), IsOk());
  EXPECT_EQ(std::string(rest, 4), "rest");
  std::string big(3 << 20, 'x');
  auto sent = std::async(std::launch::async, [&] { return pair.server->SendAll(big); });
  std::string got(big.size(), '\0');
  ASSERT_THAT(pair.client->ReceiveExactly(got.data(), got.size()), IsOk());
  EXPECT_THAT(sent.get(), IsOk());
  EXPECT_EQ(got, big);
}

TEST(TlsChannelTest, AnotherKeyIsRefusedOnBothSides) {
  Pair pair = Connected(TestJobKey(1), TestJobKey(2));
  auto [client, server] = Handshake(pair);
  EXPECT_FALSE(client.ok());
  EXPECT_THAT(server, StatusIs(absl::StatusCode::kUnauthenticated));
  EXPECT_FALSE(pair.server->established());
}

TEST(TlsChannelTest, AConnectionMadeForTheRelayIsRefusedBySupervision) {
  Pair pair = Connected(TestJobKey(3), TestJobKey(3), kRelayPurpose, kSupervisionPurpose);
  auto [client, server] = Handshake(pair);
  EXPECT_FALSE(client.ok());
  EXPECT_FALSE(server.ok());
}

TEST(TlsChannelTest, PlainTextIsRefusedBeforeAnyOfItIsRead) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  auto server_end = TlsEndpoint::Make(TlsEndpoint::Side::kServer, TestJobKey(4), kSupervisionPurpose);
  ASSERT_THAT(server_end, IsOk());
  auto server = TlsSocket::Make(*server_end, fds[1]);
  ASSERT_THAT(server, IsOk());
  std::string hello = "{\"t\":\"hello\",\"node\":\"b\"}\n";
  ASSERT_EQ(write(fds[0], hello.data(), hello.size()), static_cast<ssize_t>(hello.size()));
  EXPECT_THAT((*server)->HandshakeBy(absl::Now() + absl::Seconds(5)),
              StatusIs(absl::StatusCode::kUnauthenticated));
  char buffer[16];
  EXPECT_EQ((*server)->ReadSome(buffer, sizeof(buffer)), -1);
  close(fds[0]);
}

TEST(TlsChannelTest, ASilentPeerTimesOut) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  auto server_end = TlsEndpoint::Make(TlsEndpoint::Side::kServer, TestJobKey(5), kRelayPurpose);
  auto server = TlsSocket::Make(*server_end, fds[1]);
  ASSERT_THAT(server, IsOk());
  EXPECT_THAT((*server)->HandshakeBy(absl::Now() + absl::Milliseconds(100)),
              StatusIs(absl::StatusCode::kUnavailable));
  close(fds[0]);
}

TEST(TlsChannelTest, ARecordedHandshakeCannotBeReplayed) {
  // A client's first flight recorded off the wire and sent again to a new
  // server: the server's fresh random and key share make the old flight
  // worthless, and without the key nobody can answer the new one.
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  auto client_end = TlsEndpoint::Make(TlsEndpoint::Side::kClient, TestJobKey(6), kSupervisionPurpose);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  auto client = TlsSocket::Make(*client_end, fds[0]);
  ASSERT_THAT(client, IsOk());
  EXPECT_EQ((*client)->Handshake(), TlsSocket::Progress::kWantRead);
  std::string flight(16384, '\0');
  ssize_t n = read(fds[1], flight.data(), flight.size());
  ASSERT_GT(n, 0);
  flight.resize(n);

  int again[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, again), 0);
  auto server_end = TlsEndpoint::Make(TlsEndpoint::Side::kServer, TestJobKey(6), kSupervisionPurpose);
  auto server = TlsSocket::Make(*server_end, again[1]);
  ASSERT_THAT(server, IsOk());
  ASSERT_EQ(write(again[0], flight.data(), flight.size()), n);
  // The server answers the replayed hello and waits for a Finished that
  // only the key's holder can make; the replayer has none to send.
  shutdown(again[0], SHUT_WR);
  absl::Status status = (*server)->HandshakeBy(absl::Now() + absl::Seconds(5));
  EXPECT_FALSE(status.ok());
  EXPECT_FALSE((*server)->established());
  close(again[0]);
}

}  // namespace
}  // namespace fleetplan
