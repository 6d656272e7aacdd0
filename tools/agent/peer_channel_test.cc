#include "tools/agent/peer_channel.h"
#include "tools/secure/testing.h"

#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(100);

std::shared_ptr<TlsEndpoint> Endpoint(TlsEndpoint::Side side, uint8_t key = 1) {
  return *TlsEndpoint::Make(side, TestJobKey(key), kSupervisionPurpose);
}

// A worker's channel (client) and a coordinator's (server) on a socket
// pair, the worker's handshake done as a worker does it.
struct Channels {
  std::unique_ptr<PeerChannel> worker;
  std::unique_ptr<PeerChannel> coordinator;
};

Channels Pair(uint8_t worker_key = 1, uint8_t coordinator_key = 1) {
  int pair[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  Channels channels;
  channels.worker = std::make_unique<PeerChannel>(
      Fd(pair[0]), Endpoint(TlsEndpoint::Side::kClient, worker_key), kT0);
  channels.coordinator = std::make_unique<PeerChannel>(
      Fd(pair[1]), Endpoint(TlsEndpoint::Side::kServer, coordinator_key), kT0);
  return channels;
}

// Drives the coordinator's side (as its poll loop would) while the worker
// completes its handshake.
absl::Status Handshake(Channels& channels) {
  auto worker = std::async(std::launch::async, [&] {
    return channels.worker->HandshakeBy(absl::Now() + absl::Seconds(5));
  });
  absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (!channels.coordinator->authenticated() && !channels.coordinator->closed() &&
         absl::Now() < deadline) {
    channels.coordinator->Receive(kT0);
    absl::SleepFor(absl::Milliseconds(1));
  }
  return worker.get();
}

TEST(PeerChannelTest, CarriesMessagesBothWaysAndNotesWhenHeard) {
  Channels channels = Pair();
  ASSERT_TRUE(Handshake(channels).ok());
  ASSERT_TRUE(channels.coordinator->authenticated());
  channels.worker->Send(HelloMessage{"b"});
  channels.worker->Send(HeartbeatMessage{});
  std::vector<PeerMessage> got = channels.coordinator->Receive(kT0 + absl::Seconds(2));
  ASSERT_EQ(got.size(), 2u);
  ASSERT_TRUE(std::holds_alternative<HelloMessage>(got[0]));
  EXPECT_EQ(std::get<HelloMessage>(got[0]).node, "b");
  EXPECT_TRUE(std::holds_alternative<HeartbeatMessage>(got[1]));
  EXPECT_EQ(channels.coordinator->last_heard(), kT0 + absl::Seconds(2));
  EXPECT_TRUE(channels.coordinator->Receive(kT0 + absl::Seconds(3)).empty());
  EXPECT_EQ(channels.coordinator->last_heard(), kT0 + absl::Seconds(2)) << "nothing came";
  channels.coordinator->Send(WelcomeMessage{"r-1", "a"});
  absl::SleepFor(absl::Milliseconds(20));
  got = channels.worker->Receive(kT0);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<WelcomeMessage>(got[0]));
  EXPECT_EQ(std::get<WelcomeMessage>(got[0]).run_id, "r-1");
}

TEST(PeerChannelTest, AWorkerWithoutTheKeyIsClosedAndNothingItSentCounts) {
  Channels channels = Pair(/*worker_key=*/2, /*coordinator_key=*/1);
  channels.worker->Send(HelloMessage{"b"});
  EXPECT_FALSE(Handshake(channels).ok());
  EXPECT_TRUE(channels.coordinator->closed());
  EXPECT_FALSE(channels.coordinator->authenticated());
  EXPECT_TRUE(channels.coordinator->Receive(kT0).empty());
}

TEST(PeerChannelTest, PlainJsonFromAStrangerIsNeverParsed) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  PeerChannel coordinator(Fd(pair[1]), Endpoint(TlsEndpoint::Side::kServer), kT0);
  std::string hello = "{\"t\":\"hello\",\"node\":\"b\"}\n{\"t\":\"stop\"}\n";
  ASSERT_EQ(write(pair[0], hello.data(), hello.size()), static_cast<ssize_t>(hello.size()));
  EXPECT_TRUE(coordinator.Receive(kT0).empty());
  EXPECT_TRUE(coordinator.closed());
  EXPECT_FALSE(coordinator.error().empty());
  close(pair[0]);
}

TEST(PeerChannelTest, EndOfFileAfterTheHandshakeCloses) {
  Channels channels = Pair();
  ASSERT_TRUE(Handshake(channels).ok());
  channels.worker->Send(HeartbeatMessage{});  // a valid one first
  channels.coordinator->Receive(kT0);
  EXPECT_FALSE(channels.coordinator->closed());
  channels.worker.reset();  // end-of-file
  absl::SleepFor(absl::Milliseconds(10));
  channels.coordinator->Receive(kT0);
  EXPECT_TRUE(channels.coordinator->closed());
}

TEST(PeerChannelTest, ALineOverTheLimitClosesWithoutGrowingFurther) {
  Channels channels = Pair();
  ASSERT_TRUE(Handshake(channels).ok());
  std::string big(PeerChannel::kMaxLine + 100000, 'x');
  auto sent = std::async(std::launch::async, [&] {
    channels.worker->Send(HelloMessage{big});  // no newline inside
    channels.worker->Flush(absl::Seconds(5));
  });
  absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (!channels.coordinator->closed() && absl::Now() < deadline) {
    channels.coordinator->Receive(kT0);
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_TRUE(channels.coordinator->closed());
  EXPECT_NE(channels.coordinator->error().find("longer than"), std::string::npos);
  channels.coordinator.reset();
  sent.get();
}

}  // namespace
}  // namespace fleetplan
