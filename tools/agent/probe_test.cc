#include "tools/agent/probe.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/agent/test_ports.h"
#include "tools/protocol/check_line.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

// Runs the listen probe on a thread, its output going to a temporary file.
class Listener {
 public:
  explicit Listener(ListenProbeOptions options) : out_(std::tmpfile()) {
    thread_ = std::thread([this, options] { status_ = RunListenProbe(options, out_); });
  }
  // Waits for the probe to end; its exit status and what it printed.
  int Join(std::string* output) {
    thread_.join();
    std::rewind(out_);
    char buffer[4096];
    size_t n = std::fread(buffer, 1, sizeof(buffer), out_);
    output->assign(buffer, n);
    std::fclose(out_);
    return status_;
  }

 private:
  std::FILE* out_;
  int status_ = -1;
  std::thread thread_;
};

TEST(ProbeTest, ListenerServesTheExpectedConnectionsThenFreesThePort) {
  ListenProbeOptions options;
  options.port = FreeLoopbackPort();
  options.expect = 2;
  Listener listener(options);
  std::string target = absl::StrCat("127.0.0.1:", options.port);
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::string> connected = ConnectProbe(target, absl::Seconds(10));
    ASSERT_THAT(connected, IsOk());
    EXPECT_THAT(*connected, HasSubstr(absl::StrCat("connected to ", target, " (127.0.0.1)")));
  }
  std::string output;
  EXPECT_EQ(listener.Join(&output), 0);
  CheckOutput parsed = ParseCheckOutput(output);
  ASSERT_EQ(parsed.checks.size(), 1u) << output;
  EXPECT_EQ(parsed.checks[0].check, kCheckPort);
  EXPECT_EQ(parsed.checks[0].status, CheckStatus::kOk);
  ASSERT_EQ(parsed.facts.size(), 1u);
  EXPECT_EQ(parsed.facts[0].first, kFactListening);

  // Gone, and nothing on its side holds the port: it can be bound again.
  ListenProbeOptions again = options;
  again.expect = 0;
  std::string second;
  EXPECT_EQ(Listener(again).Join(&second), 0);
  EXPECT_THAT(second, HasSubstr("fleetplan-check port ok"));
}

TEST(ProbeTest, APortInUseFailsWithTheFix) {
  ListenProbeOptions options;
  options.port = FreeLoopbackPort();
  options.expect = 5;  // more than come: it stays until its stdin closes
  options.timeout = absl::Seconds(20);
  int stop[2];
  ASSERT_EQ(pipe(stop), 0);
  options.stop_fd = stop[0];
  Listener first(options);
  ASSERT_THAT(ConnectProbe(absl::StrCat("localhost:", options.port), absl::Seconds(10)),
              IsOk());

  ListenProbeOptions second = options;
  second.stop_fd = -1;
  std::string output;
  EXPECT_EQ(Listener(second).Join(&output), 1);
  CheckOutput parsed = ParseCheckOutput(output);
  ASSERT_EQ(parsed.checks.size(), 1u) << output;
  EXPECT_EQ(parsed.checks[0].status, CheckStatus::kFail);
  EXPECT_THAT(parsed.checks[0].message,
              HasSubstr(absl::StrCat("port ", options.port, ": in use on this node")));
  EXPECT_THAT(parsed.checks[0].message, HasSubstr("fix: stop the process"));
  EXPECT_TRUE(parsed.facts.empty());

  // Closing its stdin ends the first one, long before its timeout.
  absl::Time start = absl::Now();
  close(stop[1]);
  std::string ignored;
  EXPECT_EQ(first.Join(&ignored), 0);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  close(stop[0]);
}

TEST(ProbeTest, AConnectionJustAfterTheStopIsStillAccepted) {
  // A one-node cluster: apply closes the chief's stdin at once, as no other
  // node is left to wait for, and only then does the chief connect.
  ListenProbeOptions options;
  options.port = FreeLoopbackPort();
  options.expect = 1;
  int stop[2];
  ASSERT_EQ(pipe(stop), 0);
  options.stop_fd = stop[0];
  Listener listener(options);
  close(stop[1]);
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_THAT(ConnectProbe(absl::StrCat("127.0.0.1:", options.port), absl::Seconds(2)),
              IsOk());
  std::string ignored;
  EXPECT_EQ(listener.Join(&ignored), 0);
  close(stop[0]);
}

TEST(ProbeTest, ConnectRetriesUntilTheListenerIsUp) {
  ListenProbeOptions options;
  options.port = FreeLoopbackPort();
  std::thread late([&] {
    absl::SleepFor(absl::Milliseconds(500));
    std::string output;
    Listener(options).Join(&output);
  });
  EXPECT_THAT(ConnectProbe(absl::StrCat("127.0.0.1:", options.port), absl::Seconds(10)),
              IsOk());
  late.join();
}

TEST(ProbeTest, ConnectGivesUpNamingTheError) {
  absl::StatusOr<std::string> refused =
      ConnectProbe(absl::StrCat("127.0.0.1:", FreeLoopbackPort()), absl::Milliseconds(600));
  EXPECT_THAT(refused, StatusIs(absl::StatusCode::kUnavailable,
                                HasSubstr("Connection refused (kept trying for 600ms)")));
  EXPECT_THAT(ConnectProbe("no-port", absl::Seconds(1)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ConnectProbe("fleetplan-no-such-host.invalid:1", absl::Milliseconds(300)),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("cannot resolve")));
}

TEST(ProbeTest, InterfaceHoldingAnAddress) {
  EXPECT_THAT(InterfaceHolding("127.0.0.1"), IsOkAndHolds("lo"));
  EXPECT_THAT(InterfaceHolding("192.0.2.254"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(InterfaceHolding("eth0"), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fleetplan
