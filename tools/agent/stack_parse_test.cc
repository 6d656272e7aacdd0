#include "tools/agent/stack_parse.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"

namespace fleetplan {
namespace {

// Recorded from `python3 blk.py` (a main thread in time.sleep inside
// block_forever, another in threading.Event().wait inside other) with
// `gdb -p PID -batch -nx -ex 'thread apply all py-bt'` and `eu-stack -m -p
// PID` on Debian 12 (gdb 13.1, python3.11-dbg, elfutils 0.188).
std::string Recorded(const std::string& name) {
  absl::StatusOr<std::string> text = ReadFileToString("tools/agent/testdata/" + name);
  EXPECT_TRUE(text.ok()) << name;
  return text.value_or("");
}

TEST(ParsePyBtTest, ReadsEveryThreadsPythonFramesInnermostFirst) {
  std::vector<ThreadStack> threads = ParsePyBt(Recorded("pybt_sleep.txt"));
  ASSERT_EQ(threads.size(), 2u);
  const ThreadStack& worker = threads[0];
  ASSERT_GE(worker.frames.size(), 3u);
  EXPECT_EQ(worker.frames[0].function, "wait");
  EXPECT_EQ(worker.frames[0].file, "/usr/lib/python3.11/threading.py");
  EXPECT_EQ(worker.frames[2].function, "other");
  EXPECT_EQ(worker.frames[2].line, 5);
  const ThreadStack& main = threads[1];
  ASSERT_EQ(main.frames.size(), 3u);
  EXPECT_EQ(main.frames[0].function, "sleep");  // the builtin
  EXPECT_EQ(main.frames[0].file, "");
  EXPECT_EQ(main.frames[1].function, "block_forever");
  EXPECT_EQ(main.frames[1].file, "/tmp/pyblk.py");
  EXPECT_EQ(main.frames[1].line, 3);
  EXPECT_EQ(main.frames[2].function, "<module>");
}

TEST(ParsePyBtTest, NothingFromAProcessItCouldNotReadOrAttachTo) {
  EXPECT_TRUE(ParsePyBt(Recorded("pybt_not_python.txt")).empty());
  EXPECT_TRUE(ParsePyBt(Recorded("pybt_ptrace_refused.txt")).empty());
  EXPECT_TRUE(ParsePyBt("").empty());
}

TEST(ParseEuStackTest, ReadsEveryThreadsNativeFrames) {
  std::vector<ThreadStack> threads = ParseEuStack(Recorded("eu_stack_sleep.txt"));
  ASSERT_EQ(threads.size(), 2u);
  ASSERT_GE(threads[0].frames.size(), 3u);
  EXPECT_EQ(threads[0].frames[0].function, "clock_nanosleep");
  EXPECT_EQ(threads[0].frames[0].module, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(threads[0].frames[1].function, "time_sleep");
  EXPECT_EQ(threads[0].frames[1].module, "/usr/bin/python3.11");
  EXPECT_TRUE(ParseEuStack("eu-stack: dwfl_linux_proc_report pid 1: Permission denied").empty());
}

TEST(ParseEuStackTest, AFrameWithoutAName) {
  std::vector<ThreadStack> threads =
      ParseEuStack("PID 7 - process\nTID 7:\n#0  0x0000000000401000 - /opt/train\n");
  ASSERT_EQ(threads.size(), 1u);
  ASSERT_EQ(threads[0].frames.size(), 1u);
  EXPECT_EQ(threads[0].frames[0].function, "");
  EXPECT_EQ(threads[0].frames[0].module, "/opt/train");
}

TEST(IsLibraryPythonFileTest, StdlibSitePackagesAndFrozenAreLibraries) {
  EXPECT_TRUE(IsLibraryPythonFile("/usr/lib/python3.11/threading.py"));
  EXPECT_TRUE(IsLibraryPythonFile("/usr/lib/python3/dist-packages/torch/distributed/c10d.py"));
  EXPECT_TRUE(IsLibraryPythonFile("/home/u/venv/lib/python3.11/site-packages/x.py"));
  EXPECT_TRUE(IsLibraryPythonFile("<frozen importlib._bootstrap>"));
  EXPECT_FALSE(IsLibraryPythonFile("/work/fleetplan/train.py"));
  EXPECT_FALSE(IsLibraryPythonFile("/home/u/python3/train.py"));
}

TEST(InnermostUserFrameTest, TheMainThreadsUserFrameAndWhatItCalled) {
  std::vector<ThreadStack> python = ParsePyBt(Recorded("pybt_sleep.txt"));
  std::vector<ThreadStack> native = ParseEuStack(Recorded("eu_stack_sleep.txt"));
  int pid = python[1].tid;  // the main thread's
  std::optional<StackWhere> where = InnermostUserFrame(pid, python, native);
  ASSERT_TRUE(where.has_value());
  EXPECT_EQ(DescribeWhere(where), "block_forever (pyblk.py:3) calling sleep");
  // Another pid: no main thread here, so the first thread with one.
  EXPECT_EQ(DescribeWhere(InnermostUserFrame(1, python, native)),
            "other (pyblk.py:5) calling wait");
}

TEST(InnermostUserFrameTest, WithoutPythonTheProgramsOwnNativeFrame) {
  std::vector<ThreadStack> native = ParseEuStack(
      "PID 7 - process\nTID 7:\n"
      "#0  0x00007f clock_nanosleep@GLIBC_2.2.5 - /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "#1  0x000040 WaitForPeers - /work/fleetplan/train\n"
      "#2  0x000041 main - /work/fleetplan/train\n");
  EXPECT_EQ(DescribeWhere(InnermostUserFrame(7, {}, native)),
            "WaitForPeers (train) calling clock_nanosleep");
  EXPECT_FALSE(InnermostUserFrame(7, {}, {}).has_value());
}

}  // namespace
}  // namespace fleetplan
