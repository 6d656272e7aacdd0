#include "tools/apply/agent_session.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tools/apply/pipe_stream_testing.h"
#include "tools/process/files.h"

namespace fleetplan {
namespace {

// A connection with streams only: everything else must go through the session.
class StreamOnlyConnection : public Connection {
 public:
  absl::StatusOr<int> Run(const CommandSpec&, const OutputCallback&,
                          const absl::Notification*) override {
    return absl::UnimplementedError("stream only");
  }
  absl::StatusOr<std::string> ReadFile(const std::string&) override {
    return absl::UnimplementedError("stream only");
  }
  absl::Status WriteFile(const std::string&, absl::string_view, uint32_t) override {
    return absl::UnimplementedError("stream only");
  }
  absl::Status PutFiles(const std::vector<FileToSend>&, const std::string&) override {
    return absl::UnimplementedError("stream only");
  }
  absl::Status RemoveFiles(const std::string&, const std::vector<std::string>&) override {
    return absl::UnimplementedError("stream only");
  }
  absl::StatusOr<std::unique_ptr<CommandStream>> OpenStream(const std::string& command) override {
    return std::make_unique<PipeStream>(command);
  }
};

std::string Agent() {
  return absl::StrCat(getenv("TEST_SRCDIR"), "/fleetplan/tools/agent/fleetplan-agent");
}

std::string TempDir() {
  std::string dir = absl::StrCat(getenv("TEST_TMPDIR"), "/",
                                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
  EXPECT_TRUE(MakeDirs(dir).ok());
  return dir;
}

// An "agent" script at `path` saying `body`.
std::string Script(const std::string& dir, const std::string& body) {
  std::string path = dir + "/agent";
  EXPECT_TRUE(WriteFileAtomic(path, absl::StrCat("#!/bin/sh\n", body, "\n"), 0755).ok());
  return path;
}

// What a scripted agent says first to be taken for one that serves.
constexpr char kGreets[] =
    "printf 'H\\000\\000\\000\\035\\000\\000\\000\\031fleetplan-apply-session 1'; ";

// A session with `agent` on a connection of its own.
absl::StatusOr<std::unique_ptr<AgentSessionConnection>> OpenOn(const std::string& agent,
                                                               const std::string& node = "n1",
                                                               SessionRunOptions options = {}) {
  std::unique_ptr<Connection> base = std::make_unique<StreamOnlyConnection>();
  return AgentSessionConnection::Open(base, node, agent, absl::Seconds(10), options);
}

TEST(AgentSessionTest, CarriesFilesAndCommandsThroughTheRealAgent) {
  std::string dir = TempDir();
  std::unique_ptr<Connection> base = std::make_unique<StreamOnlyConnection>();
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> session =
      AgentSessionConnection::Open(base, "n1", Agent(), absl::Seconds(10));
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ(base, nullptr);  // the session holds it now
  Connection& node = **session;
  ASSERT_TRUE(node.WriteFile(dir + "/state/steps/launch", "h1\n", 0644).ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/local.sh", std::string(3 << 20, 'x'), 0644).ok());
  ASSERT_TRUE(node.PutFiles({{dir + "/local.sh", "sub/big", 0700, 3 << 20}}, dir + "/w").ok());
  EXPECT_EQ(ReadFileToString(dir + "/w/sub/big")->size(), 3u << 20);
  std::vector<absl::StatusOr<std::string>> read =
      node.ReadFiles({dir + "/state/steps/launch", dir + "/none"});
  EXPECT_EQ(*read[0], "h1\n");
  EXPECT_TRUE(absl::IsNotFound(read[1].status()));
  ASSERT_TRUE(node.RemoveFiles(dir + "/w", {"sub/big"}).ok());
  EXPECT_FALSE(ReadFileToString(dir + "/w/sub/big").ok());
  std::string output;
  absl::StatusOr<int> status = node.Run(
      {"echo \"$RUN\"; exit 4", {{"RUN", "r-1"}}, dir},
      [&](absl::string_view chunk) { absl::StrAppend(&output, chunk); }, nullptr);
  EXPECT_EQ(*status, 4);
  EXPECT_EQ(output, "r-1\n");
  std::string check;
  EXPECT_EQ(
      *(*session)->CheckWorkdir(dir + "/wd", dir + "/wd/.fleetplan", 1, absl::Seconds(30), &check),
      0);
  EXPECT_TRUE(absl::StartsWith(check, "fleetplan-check workdir ok")) << check;
}

TEST(AgentSessionTest, ACancelledCommandIsStoppedThroughTheSession) {
  SessionRunOptions options;
  options.stdin_grace = absl::Milliseconds(100);
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> session = OpenOn(Agent(), "n1", options);
  ASSERT_TRUE(session.ok()) << session.status();
  absl::Notification cancel;
  cancel.Notify();
  absl::Time start = absl::Now();
  CommandSpec command{"exec sleep 30"};
  command.hold_stdin = true;
  absl::StatusOr<int> status = (*session)->Run(
      command, [](absl::string_view) {}, &cancel);
  EXPECT_EQ(*status, 128 + SIGTERM);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  // The session goes on.
  EXPECT_TRUE(absl::IsNotFound((*session)->ReadFile("/nonexistent/x").status()));
}

TEST(AgentSessionTest, APausedSessionStartsAFreshAgentOnItsNextRequest) {
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> session = OpenOn(Agent());
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_TRUE(absl::IsNotFound((*session)->ReadFile("/nonexistent/a").status()));
  // Longer than the agent waits for a request.
  absl::SleepFor(kSessionIdleTimeout + absl::Milliseconds(300));
  EXPECT_TRUE(absl::IsNotFound((*session)->ReadFile("/nonexistent/b").status()));
}

TEST(AgentSessionTest, TheAgentLeavesAnIdleSession) {
  SessionRunOptions options;
  options.restart_after_idle = absl::Hours(1);  // do not start it again
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> session = OpenOn(Agent(), "n1", options);
  ASSERT_TRUE(session.ok()) << session.status();
  absl::SleepFor(kSessionIdleTimeout + absl::Milliseconds(300));
  absl::StatusOr<std::string> read = (*session)->ReadFile("/nonexistent/b");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(read.status().message(), "node 'n1'")) << read.status();
}

TEST(AgentSessionTest, AMissingAgentLeavesTheConnectionToItsCommands) {
  std::unique_ptr<Connection> base = std::make_unique<StreamOnlyConnection>();
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> session =
      AgentSessionConnection::Open(base, "n1", TempDir() + "/no-agent", absl::Seconds(10));
  EXPECT_EQ(session.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(session.status().message(), "no-agent")) << session.status();
  EXPECT_NE(base, nullptr);
}

TEST(AgentSessionTest, AStaleAgentIsRefusedWithWhatItSaid) {
  // An agent from before the session: the flag is unknown to it.
  std::string agent =
      Script(TempDir(), "echo \"ERROR: Unknown command line flag 'apply_session'\" >&2; exit 1");
  std::unique_ptr<Connection> base = std::make_unique<StreamOnlyConnection>();
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> session =
      AgentSessionConnection::Open(base, "n1", agent, absl::Seconds(10));
  EXPECT_EQ(session.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(session.status().message(), "Unknown command line flag"))
      << session.status();
  EXPECT_NE(base, nullptr);
}

TEST(AgentSessionTest, AnotherVersionsGreetingIsRefused) {
  std::string agent =
      Script(TempDir(),
             "printf 'H\\000\\000\\000\\035\\000\\000\\000\\031fleetplan-apply-session 0'; cat "
             ">/dev/null");
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> session = OpenOn(agent);
  EXPECT_EQ(session.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(session.status().message(), "something else")) << session.status();
}

TEST(AgentSessionTest, ABrokenStreamFailsThisAndEveryLaterRequestNamingTheNode) {
  // A right greeting, then a frame that cannot be one.
  std::string agent = Script(
      TempDir(),
      absl::StrCat(kGreets, "head -c 5 >/dev/null; printf 'k\\177\\377\\377\\377'; sleep 1"));
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> session = OpenOn(agent, "n7");
  ASSERT_TRUE(session.ok()) << session.status();
  absl::Status written = (*session)->WriteFile("/tmp/x", "y", 0644);
  EXPECT_EQ(written.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(written.message(), "node 'n7'")) << written;
  EXPECT_TRUE(absl::StrContains(written.message(), "broken")) << written;
  EXPECT_EQ((*session)->ReadFile("/tmp/x").status().code(), absl::StatusCode::kUnavailable);
}

TEST(AgentSessionTest, AnAnswerThatNeverComesBreaksTheSessionInTime) {
  // Greets, then reads and never answers.
  std::string agent =
      Script(TempDir(), absl::StrCat(kGreets, "while IFS= read -r line; do :; done"));
  SessionRunOptions options;
  options.reply_timeout = absl::Milliseconds(300);
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> session = OpenOn(agent, "n3", options);
  ASSERT_TRUE(session.ok()) << session.status();
  std::string output;
  absl::StatusOr<int> verified =
      (*session)->VerifyTree("/w", "/m", "", "", absl::Milliseconds(300), &output);
  EXPECT_EQ(verified.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(absl::StrContains(verified.status().message(), "node 'n3'")) << verified.status();
  // Out of step for good: no answer is trusted any more.
  EXPECT_EQ((*session)->WriteFile("/tmp/x", "y", 0644).code(), absl::StatusCode::kUnavailable);
}

TEST(AgentSessionTest, AnAgentThatDiesMidRequestFailsIt) {
  std::string agent =
      Script(TempDir(), absl::StrCat(kGreets, "head -c 1 >/dev/null; echo killed >&2; exit 137"));
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> session = OpenOn(agent, "n2");
  ASSERT_TRUE(session.ok()) << session.status();
  absl::StatusOr<int> status = (*session)->Run(
      {"true"}, [](absl::string_view) {}, nullptr);
  EXPECT_EQ(status.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(status.status().message(), "killed")) << status.status();
}

}  // namespace
}  // namespace fleetplan
