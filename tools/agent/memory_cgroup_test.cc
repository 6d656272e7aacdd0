#include "tools/agent/memory_cgroup.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"

namespace fleetplan {
namespace {

// A /proc and a /sys/fs/cgroup of the test's own, as a node would have them.
class FakeKernel {
 public:
  FakeKernel() : root_(MakeTempDir()) {
    paths_.proc = root_ + "/proc";
    paths_.cgroups = root_ + "/cgroup";
  }
  void Write(const std::string& path, const std::string& text) {
    std::string full = root_ + "/" + path;
    EXPECT_TRUE(MakeDirs(full.substr(0, full.rfind('/'))).ok());
    EXPECT_TRUE(WriteFileAtomic(full, text, 0644).ok()) << full;
  }
  const KernelPaths& paths() const { return paths_; }
  std::string dir(const std::string& path) const { return root_ + "/" + path; }

 private:
  std::string root_;
  KernelPaths paths_;
};

TEST(MemoryCgroupTest, ReadsAV1MemoryControllerBesideOthers) {
  FakeKernel kernel;
  kernel.Write("proc/7/cgroup", "5:devices:/\n4:memory:/docker/abc\n0::/\n");
  kernel.Write("cgroup/memory/docker/abc/memory.limit_in_bytes", "67108864\n");
  kernel.Write("cgroup/memory/docker/abc/memory.oom_control",
               "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
  std::optional<MemoryCgroup> cgroup = MemoryCgroupOf(7, kernel.paths());
  ASSERT_TRUE(cgroup.has_value());
  EXPECT_EQ(cgroup->dir, kernel.dir("cgroup/memory/docker/abc"));
  EXPECT_FALSE(cgroup->v2);
  EXPECT_EQ(OomKills(*cgroup), 2u);
  EXPECT_EQ(MemoryLimit(cgroup, kernel.paths()), 64u << 20);
}

TEST(MemoryCgroupTest, ReadsV2AloneOrUnderUnified) {
  FakeKernel alone;
  alone.Write("proc/7/cgroup", "0::/user.slice/job\n");
  alone.Write("cgroup/user.slice/job/memory.events", "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n");
  alone.Write("cgroup/user.slice/job/memory.max", "max\n");
  alone.Write("proc/meminfo", "MemTotal:       2048 kB\nMemFree: 1 kB\n");
  std::optional<MemoryCgroup> cgroup = MemoryCgroupOf(7, alone.paths());
  ASSERT_TRUE(cgroup.has_value());
  EXPECT_TRUE(cgroup->v2);
  EXPECT_EQ(OomKills(*cgroup), 1u);
  // No limit: the node's memory is what applies.
  EXPECT_EQ(MemoryLimit(cgroup, alone.paths()), 2048u * 1024);

  FakeKernel hybrid;
  hybrid.Write("proc/7/cgroup", "4:cpu:/\n0::/job\n");
  hybrid.Write("cgroup/unified/job/memory.events", "oom_kill 0\n");
  cgroup = MemoryCgroupOf(7, hybrid.paths());
  ASSERT_TRUE(cgroup.has_value());
  EXPECT_EQ(cgroup->dir, hybrid.dir("cgroup/unified/job"));
}

// A container sees its own cgroup at the controller's root while /proc
// names the host's path.
TEST(MemoryCgroupTest, AContainersOwnCgroupIsItsControllersRoot) {
  FakeKernel kernel;
  kernel.Write("proc/7/cgroup", "4:memory:/docker/abc\n");
  kernel.Write("cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  kernel.Write("cgroup/memory/memory.oom_control", "oom_kill 0\n");
  kernel.Write("proc/meminfo", "MemTotal: 4 kB\n");
  std::optional<MemoryCgroup> cgroup = MemoryCgroupOf(7, kernel.paths());
  ASSERT_TRUE(cgroup.has_value());
  EXPECT_EQ(cgroup->dir, kernel.dir("cgroup/memory"));
  EXPECT_EQ(MemoryLimit(cgroup, kernel.paths()), 4096u) << "v1's 'no limit' is no limit";
}

TEST(MemoryCgroupTest, NothingToReadIsNoOomKill) {
  FakeKernel kernel;
  EXPECT_FALSE(MemoryCgroupOf(7, kernel.paths()).has_value());
  OomWatch watch = WatchOomKills(7, kernel.paths());
  EXPECT_FALSE(OomKilledSince(watch));
  EXPECT_EQ(MemoryLimit(std::nullopt, kernel.paths()), 0u);
}

TEST(MemoryCgroupTest, ARiseInTheCountSinceTheWatchBegan) {
  FakeKernel kernel;
  kernel.Write("proc/7/cgroup", "4:memory:/a\n");
  kernel.Write("cgroup/memory/a/memory.limit_in_bytes", "1024\n");
  kernel.Write("cgroup/memory/a/memory.oom_control", "oom_kill 5\n");
  OomWatch watch = WatchOomKills(7, kernel.paths());
  EXPECT_FALSE(OomKilledSince(watch));
  kernel.Write("cgroup/memory/a/memory.oom_control", "oom_kill 6\n");
  EXPECT_TRUE(OomKilledSince(watch));
}

// The kernel's own record: a child in a memory cgroup of 64 MiB that
// touches 256 MiB is ended by the OOM killer, which counts it. Needs a
// cgroup v1 memory controller this test may write (root, tag "local").
TEST(MemoryCgroupTest, TheKernelCountsARealOomKill) {
  std::optional<MemoryCgroup> own = MemoryCgroupOf(getpid());
  if (!own.has_value() || own->v2) GTEST_SKIP() << "no cgroup v1 memory controller here";
  std::string dir = absl::StrCat(own->dir, "/fleetplan-oom-test-", getpid());
  if (mkdir(dir.c_str(), 0755) != 0) {
    GTEST_SKIP() << "cannot make a memory cgroup in " << own->dir << ": " << strerror(errno);
  }
  // cgroup files take a plain write, not a rename.
  FILE* limit = fopen((dir + "/memory.limit_in_bytes").c_str(), "w");
  ASSERT_NE(limit, nullptr);
  ASSERT_GE(fputs("67108864", limit), 0);
  ASSERT_EQ(fclose(limit), 0);
  int ready[2], go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  pid_t child = fork();
  if (child == 0) {
    FILE* procs = fopen((dir + "/cgroup.procs").c_str(), "w");
    if (procs == nullptr || fprintf(procs, "%d", getpid()) < 0 || fclose(procs) != 0) _exit(3);
    char byte = 1;
    if (write(ready[1], &byte, 1) != 1 || read(go[0], &byte, 1) != 1) _exit(4);
    size_t size = 256u << 20;
    char* memory = static_cast<char*>(malloc(size));
    for (size_t i = 0; memory != nullptr && i < size; i += 4096) memory[i] = 1;
    _exit(0);
  }
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  OomWatch watch = WatchOomKills(child);
  ASSERT_TRUE(watch.cgroup.has_value());
  EXPECT_EQ(watch.cgroup->dir, dir);
  ASSERT_EQ(write(go[1], &byte, 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_TRUE(OomKilledSince(watch));
  EXPECT_EQ(MemoryLimit(watch.cgroup), 64u << 20);
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace fleetplan
