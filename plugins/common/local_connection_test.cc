#include "plugins/common/local_connection.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Collects output from the thread that runs a command, for another thread
// to wait on.
class OutputSink {
 public:
  OutputCallback Callback() {
    return [this](absl::string_view chunk) {
      absl::MutexLock lock(&mu_);
      ++chunks_;
      absl::StrAppend(&text_, chunk);
    };
  }
  bool WaitFor(const std::string& text, absl::Duration timeout = absl::Seconds(5)) {
    absl::MutexLock lock(&mu_);
    auto found = [&] { return text_.find(text) != std::string::npos; };
    return mu_.AwaitWithTimeout(absl::Condition(&found), timeout);
  }
  std::string text() {
    absl::MutexLock lock(&mu_);
    return text_;
  }
  int chunks() {
    absl::MutexLock lock(&mu_);
    return chunks_;
  }

 private:
  absl::Mutex mu_;
  std::string text_;
  int chunks_ = 0;
};

CommandSpec Command(const std::string& command) {
  CommandSpec spec;
  spec.command = command;
  return spec;
}

TEST(LocalConnectionTest, RunsWithEnvAndCwdAndReturnsExitStatus) {
  LocalConnection connection;
  std::string dir = MakeTempDir();
  CommandSpec command = Command("echo \"$GREETING\"; pwd; echo oops >&2; exit 7");
  command.env = {{"GREETING", "hello there"}};
  command.cwd = dir;
  OutputSink sink;
  FP_ASSERT_OK_AND_ASSIGN(int status, connection.Run(command, sink.Callback(), nullptr));
  EXPECT_EQ(status, 7);
  EXPECT_EQ(sink.text(), "hello there\n" + dir + "\noops\n");

  FP_ASSERT_OK_AND_ASSIGN(status, connection.Run(Command("kill -TERM $$"),
                                                 sink.Callback(), nullptr));
  EXPECT_EQ(status, 128 + 15);
  command.cwd = dir + "/missing";
  EXPECT_THAT(connection.Run(command, sink.Callback(), nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("missing")));
}

TEST(LocalConnectionTest, HostileEnvValueArrivesByteForByte) {
  std::string marker = MakeTempDir() + "/pwned";
  std::string hostile = absl::StrCat("$(touch ", marker, ") `touch ", marker,
                                     "` 'single' \"double\" back\\slash\\n\nnew line ;&|*");
  LocalConnection connection;
  CommandSpec command = Command("printf %s \"$HOSTILE\"");
  command.env = {{"HOSTILE", hostile}};
  OutputSink sink;
  FP_ASSERT_OK_AND_ASSIGN(int status, connection.Run(command, sink.Callback(), nullptr));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(sink.text(), hostile);
  EXPECT_NE(access(marker.c_str(), F_OK), 0) << "the value was executed";
}

TEST(LocalConnectionTest, OutputIsStreamedWhileTheCommandRuns) {
  LocalConnection connection;
  OutputSink sink;
  absl::Notification done;
  std::thread runner([&] {
    auto status = connection.Run(Command("echo first; sleep 0.5; echo second"),
                                 sink.Callback(), nullptr);
    EXPECT_THAT(status, IsOk());
    done.Notify();
  });
  EXPECT_TRUE(sink.WaitFor("first\n"));
  EXPECT_FALSE(done.HasBeenNotified()) << "first line must arrive before the end";
  runner.join();
  EXPECT_EQ(sink.text(), "first\nsecond\n");
  EXPECT_GE(sink.chunks(), 2);
}

// Cancels `command` once it printed its first line; returns how long the
// run took from the cancel, its status, and the pid it printed as `pid=N`.
struct CancelledRun {
  absl::Duration after_cancel;
  absl::StatusOr<int> status;
  pid_t pid = 0;
};
CancelledRun RunAndCancel(LocalConnection& connection, const CommandSpec& command) {
  OutputSink sink;
  absl::Notification cancel;
  CancelledRun run;
  std::thread runner([&] { run.status = connection.Run(command, sink.Callback(), &cancel); });
  if (sink.WaitFor("\n")) run.pid = PidsAfter(sink.text(), "pid=").at(0);
  absl::Time start = absl::Now();
  cancel.Notify();
  runner.join();
  run.after_cancel = absl::Now() - start;
  return run;
}

TEST(LocalConnectionTest, CancelStopsAHeldCommandThatIgnoresStdin) {
  LocalOptions options;
  options.stdin_grace = absl::Milliseconds(200);
  options.term_grace = absl::Seconds(2);
  LocalConnection connection(options);
  CommandSpec command = Command("sleep 1000 & echo pid=$!; wait");
  command.hold_stdin = true;
  CancelledRun run = RunAndCancel(connection, command);
  ASSERT_NE(run.pid, 0);
  EXPECT_GE(run.after_cancel, absl::Milliseconds(200)) << "the stdin grace comes first";
  EXPECT_LT(run.after_cancel, absl::Seconds(2));
  EXPECT_THAT(run.status, IsOkAndHolds(128 + 15));
  EXPECT_TRUE(WaitUntilGone(run.pid));
}

TEST(LocalConnectionTest, CancelSignalsAtOnceACommandThatDoesNotHoldStdin) {
  LocalConnection connection;  // default stdin grace (10 s): not waited for
  CancelledRun run = RunAndCancel(connection, Command("sleep 1000 & echo pid=$!; wait"));
  ASSERT_NE(run.pid, 0);
  EXPECT_LT(run.after_cancel, absl::Seconds(2));
  EXPECT_THAT(run.status, IsOkAndHolds(128 + 15));
  EXPECT_TRUE(WaitUntilGone(run.pid));
}

TEST(LocalConnectionTest, CancelClosesHeldStdin) {
  LocalConnection connection;  // default grace: EOF must be enough
  OutputSink sink;
  absl::Notification cancel;
  absl::StatusOr<int> status;
  CommandSpec command = Command("echo pid=$$; cat; echo saw-eof");
  command.hold_stdin = true;
  std::thread runner([&] { status = connection.Run(command, sink.Callback(), &cancel); });
  ASSERT_TRUE(sink.WaitFor("\n"));
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_THAT(sink.text(), Not(HasSubstr("saw-eof"))) << "stdin must stay open";
  cancel.Notify();
  runner.join();
  // Ended by EOF (status 0, its last echo), not by a signal.
  ASSERT_THAT(status, IsOk());
  EXPECT_EQ(*status, 0);
  EXPECT_THAT(sink.text(), HasSubstr("saw-eof\n"));
  EXPECT_FALSE(ProcessRunning(PidsAfter(sink.text(), "pid=").at(0)));
}

TEST(LocalConnectionTest, StdinIsDevNullWhenNotHeld) {
  LocalConnection connection;
  OutputSink sink;
  FP_ASSERT_OK_AND_ASSIGN(int status,
                          connection.Run(Command("cat; echo eof"), sink.Callback(), nullptr));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(sink.text(), "eof\n");
}

TEST(LocalConnectionTest, FilesAreWrittenReadCopiedAndRemoved) {
  LocalConnection connection;
  std::string dir = MakeTempDir();
  EXPECT_THAT(connection.ReadFile(dir + "/nothing"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("nothing")));
  ASSERT_THAT(connection.WriteFile(dir + "/deep/er/state.json", "{}", 0600), IsOk());
  FP_ASSERT_OK_AND_ASSIGN(std::string content, connection.ReadFile(dir + "/deep/er/state.json"));
  EXPECT_EQ(content, "{}");

  ASSERT_THAT(connection.WriteFile(dir + "/src/run.sh", "#!/bin/sh\n", 0755), IsOk());
  ASSERT_THAT(connection.WriteFile(dir + "/src/a.txt", "a", 0644), IsOk());
  std::vector<FileToSend> files = {{dir + "/src/run.sh", "bin/run.sh", 0755, 10},
                                   {dir + "/src/a.txt", "a.txt", 0640, 1}};
  ASSERT_THAT(connection.PutFiles(files, dir + "/dst"), IsOk());
  FP_ASSERT_OK_AND_ASSIGN(content, connection.ReadFile(dir + "/dst/bin/run.sh"));
  EXPECT_EQ(content, "#!/bin/sh\n");
  struct stat st;
  ASSERT_EQ(stat((dir + "/dst/bin/run.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  ASSERT_EQ(stat((dir + "/dst/a.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);

  EXPECT_THAT(connection.PutFiles({{dir + "/src/a.txt", "../escape", 0644, 1}}, dir + "/dst"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("..")));
  ASSERT_THAT(connection.RemoveFiles(dir + "/dst", {"bin/run.sh", "never-there"}), IsOk());
  EXPECT_NE(access((dir + "/dst/bin/run.sh").c_str(), F_OK), 0);
  EXPECT_EQ(access((dir + "/dst/a.txt").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace fleetplan
