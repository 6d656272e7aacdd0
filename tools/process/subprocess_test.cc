#include "tools/process/subprocess.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Subprocess> StartOrDie(SubprocessOptions options) {
  auto process = Subprocess::Start(options);
  EXPECT_TRUE(process.ok()) << process.status();
  return process.ok() ? std::move(*process) : nullptr;
}

SubprocessOptions Shell(const std::string& script) {
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", script};
  return options;
}

// Pumps until the process exits and its output is drained.
int RunToEnd(Subprocess& process, std::string* output) {
  Subprocess* processes[] = {&process};
  while (!process.TryWait().has_value() || process.output_open()) {
    PumpOutput(processes, {}, absl::Milliseconds(50),
               [&](size_t, absl::string_view chunk) { absl::StrAppend(output, chunk); });
  }
  return *process.exit_status();
}

// Pumps until `output` contains `text`.
void PumpUntil(Subprocess& process, std::string* output, const std::string& text) {
  Subprocess* processes[] = {&process};
  absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (output->find(text) == std::string::npos && absl::Now() < deadline) {
    PumpOutput(processes, {}, absl::Milliseconds(50),
               [&](size_t, absl::string_view chunk) { absl::StrAppend(output, chunk); });
  }
  ASSERT_THAT(*output, HasSubstr(text));
}

TEST(SubprocessTest, MergesStdoutAndStderrAndReturnsExitCode) {
  auto process = StartOrDie(Shell("echo out; echo err >&2; exit 3"));
  std::string output;
  EXPECT_EQ(RunToEnd(*process, &output), 3);
  EXPECT_EQ(output, "out\nerr\n");
}

TEST(SubprocessTest, SignalBecomes128PlusSignal) {
  auto process = StartOrDie(Shell("kill -9 $$"));
  std::string output;
  EXPECT_EQ(RunToEnd(*process, &output), 128 + SIGKILL);
}

TEST(SubprocessTest, EnvAddsToInheritedEnvironmentAndCwdIsHonoured) {
  setenv("FLEETPLAN_INHERITED", "kept", 1);
  SubprocessOptions options = Shell("printf '%s|%s|' \"$FLEETPLAN_INHERITED\" \"$X\"; pwd");
  options.env = {{"X", "first"}, {"X", "a \"b\" $(c) \\d"}};
  std::string dir = MakeTempDir();
  options.cwd = dir;
  auto process = StartOrDie(options);
  std::string output;
  EXPECT_EQ(RunToEnd(*process, &output), 0);
  EXPECT_EQ(output, "kept|a \"b\" $(c) \\d|" + dir + "\n");
}

TEST(SubprocessTest, ProgramIsFoundInPath) {
  SubprocessOptions options;
  options.argv = {"echo", "found"};
  auto process = StartOrDie(options);
  std::string output;
  EXPECT_EQ(RunToEnd(*process, &output), 0);
  EXPECT_EQ(output, "found\n");
}

TEST(SubprocessTest, MissingProgramOrCwdIsAnError) {
  SubprocessOptions options;
  options.argv = {"no-such-program-fleetplan"};
  EXPECT_THAT(Subprocess::Start(options),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("no-such-program-fleetplan")));
  options.argv = {"/bin/true"};
  options.cwd = "/no/such/dir";
  EXPECT_THAT(Subprocess::Start(options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("/no/such/dir")));
  EXPECT_THAT(Subprocess::Start(SubprocessOptions{}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("argv")));
}

TEST(SubprocessTest, StdinIsDevNullOrAPipeUntilClosed) {
  auto null_stdin = StartOrDie(Shell("cat; echo done"));
  std::string output;
  EXPECT_EQ(RunToEnd(*null_stdin, &output), 0);
  EXPECT_EQ(output, "done\n");

  SubprocessOptions options = Shell("echo started; cat; echo eof");
  options.stdin_pipe = true;
  auto piped = StartOrDie(options);
  output.clear();
  PumpUntil(*piped, &output, "started\n");
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_FALSE(piped->TryWait().has_value()) << "cat must wait for stdin";
  piped->CloseStdin();
  EXPECT_EQ(RunToEnd(*piped, &output), 0);
  EXPECT_EQ(output, "started\neof\n");
}

TEST(SubprocessTest, StopAllKillsProcessGroupsIncludingGrandchildren) {
  auto a = StartOrDie(Shell("sleep 1000 & echo pid=$!; wait"));
  auto b = StartOrDie(Shell("echo pid=$$; exec sleep 1000"));
  std::string out_a, out_b;
  PumpUntil(*a, &out_a, "\n");
  PumpUntil(*b, &out_b, "\n");
  pid_t grandchild = PidsAfter(out_a, "pid=").at(0);
  ASSERT_TRUE(ProcessRunning(grandchild));

  Subprocess* all[] = {a.get(), b.get()};
  StopAll(all, absl::Seconds(5), [](size_t, absl::string_view) {});
  // SIGTERM sufficed: the statuses say so (SIGKILL after the grace would
  // read 137), whatever the machine's load.
  EXPECT_EQ(*a->exit_status(), 128 + SIGTERM);
  EXPECT_EQ(*b->exit_status(), 128 + SIGTERM);
  EXPECT_TRUE(WaitUntilGone(grandchild));
  EXPECT_FALSE(ProcessRunning(a->pid()));
  EXPECT_FALSE(ProcessRunning(b->pid()));
}

TEST(SubprocessTest, StopAllEscalatesToSigkillAfterGrace) {
  auto stubborn = StartOrDie(
      Shell("trap 'echo got-term' TERM; echo ready; while :; do sleep 0.05; done"));
  std::string output;
  PumpUntil(*stubborn, &output, "ready\n");
  Subprocess* all[] = {stubborn.get()};
  absl::Time start = absl::Now();
  StopAll(all, absl::Milliseconds(300),
          [&](size_t, absl::string_view chunk) { absl::StrAppend(&output, chunk); });
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_EQ(*stubborn->exit_status(), 128 + SIGKILL);
  EXPECT_THAT(output, HasSubstr("got-term")) << "output is pumped while stopping";
}

TEST(SubprocessTest, ReapingKillsWhatTheChildLeftInItsGroup) {
  auto process = StartOrDie(Shell("sleep 1000 & echo pid=$!"));
  std::string output;
  EXPECT_EQ(RunToEnd(*process, &output), 0);
  pid_t orphan = PidsAfter(output, "pid=").at(0);
  EXPECT_TRUE(WaitUntilGone(orphan));
}

TEST(SubprocessTest, DestructorKillsARunningChild) {
  pid_t pid;
  {
    auto process = StartOrDie(Shell("exec sleep 1000"));
    pid = process->pid();
    ASSERT_TRUE(ProcessRunning(pid));
  }
  EXPECT_FALSE(ProcessRunning(pid));
}

TEST(SubprocessTest, ChildDiesWithItsParent) {
  int pids[2];
  ASSERT_EQ(pipe(pids), 0);
  pid_t parent = fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    // An intermediate parent that dies without cleaning up.
    auto process = Subprocess::Start(Shell("exec sleep 1000"));
    pid_t child = process.ok() ? (*process)->pid() : -1;
    ssize_t n = write(pids[1], &child, sizeof(child));
    _exit(n == sizeof(child) ? 0 : 1);
  }
  pid_t child = -1;
  ASSERT_EQ(read(pids[0], &child, sizeof(child)), sizeof(child));
  ASSERT_GT(child, 0);
  int status;
  ASSERT_EQ(waitpid(parent, &status, 0), parent);
  EXPECT_TRUE(WaitUntilGone(child));
  close(pids[0]);
  close(pids[1]);
}

TEST(SubprocessTest, PumpReportsWatchedDescriptors) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::vector<size_t> ready = PumpOutput({}, {fds[0]}, absl::Milliseconds(20),
                                         [](size_t, absl::string_view) {});
  EXPECT_TRUE(ready.empty());
  close(fds[1]);
  ready = PumpOutput({}, {fds[0]}, absl::Seconds(5), [](size_t, absl::string_view) {});
  EXPECT_EQ(ready, std::vector<size_t>{0});
  close(fds[0]);
}

TEST(ExitStatusTest, MapsWaitStatus) {
  EXPECT_EQ(ExitStatusFromWait(0), 0);
  EXPECT_EQ(ExitStatusFromWait(7 << 8), 7);
  EXPECT_EQ(ExitStatusFromWait(SIGTERM), 128 + SIGTERM);
}

TEST(SubprocessTest, RunToCompletionCollectsOutputAndStatus) {
  absl::StatusOr<Completed> done = RunToCompletion(Shell("echo out; echo err >&2; exit 4"),
                                                   absl::Seconds(10));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->status, 4);
  EXPECT_FALSE(done->timed_out);
  EXPECT_EQ(done->output, "out\nerr\n");
}

TEST(SubprocessTest, RunToCompletionStopsWhatOutlivesTheTimeout) {
  absl::Time start = absl::Now();
  absl::StatusOr<Completed> done =
      RunToCompletion(Shell("echo started; sleep 30"), absl::Milliseconds(300));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE(done->timed_out);
  EXPECT_EQ(done->status, 128 + SIGTERM);
  EXPECT_EQ(done->output, "started\n");
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

}  // namespace
}  // namespace fleetplan
