// One apply of a spec at a time, end to end on the local transport: the
// chief's .fleetplan/apply.lock taken by the real apply and stop binaries.

#include <unistd.h>

#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/apply_harness.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kExitLocked = 73;

std::string ThisHost() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

std::string LockJson(const std::string& host, int pid) {
  return absl::StrCat(R"({"host":")", host, R"(","pid":)", pid,
                      R"(,"run_id":"20260101T000000Z-1","since":"2026-01-01T00:00:00.000Z",)",
                      R"("user":"alice"})");
}

class ApplyLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ASSERT_THAT(CopyFileAtomic(Runfile("tests/testdata/rank.sh"), dir_ + "/src/rank.sh", 0755),
                IsOk());
    ASSERT_THAT(MakeDirs(dir_ + "/out"), IsOk());
    spec_ = dir_ + "/cluster.toml";
    ASSERT_THAT(
        WriteFileAtomic(
            spec_,
            absl::StrCat("name = \"locked\"\n[defaults]\ntransport = \"local\"\n"
                         "[[nodes]]\nname = \"a\"\naddress = \"127.0.0.1\"\nchief = true\n"
                         "workdir = ", TomlString(dir_ + "/work-a"),
                         "\n[[nodes]]\nname = \"b\"\naddress = \"127.0.0.2\"\nworkdir = ",
                         TomlString(dir_ + "/work-b"),
                         "\n[sync]\nsource = \"src\"\n[env]\nFP_OUT = ", TomlString(dir_ + "/out"),
                         "\nFAIL_RANK = \"none\"\n[network]\nmaster_port = 29575\n"
                         "[job]\nprogram = \"./rank.sh\"\nnproc_per_node = 1\n"),
            0644),
        IsOk());
  }

  std::string LockPath() const { return dir_ + "/work-a/.fleetplan/apply.lock"; }

  // Files a writer left half-done: temporaries of records or of the lock.
  std::string Leftovers() {
    absl::StatusOr<std::string> found = RunScript(absl::StrCat(
        "find ", dir_, "/work-a/.fleetplan ", dir_,
        "/work-b/.fleetplan \\( -name '*.tmp' -o -name '.apply.lock.*' -o -name "
        "'*.takeover' -o -name '*fleetplan-tmp*' \\) -print"));
    return found.ok() ? *found : std::string(found.status().message());
  }

  ToolResult Apply(std::vector<std::string> flags) {
    std::vector<std::string> argv = {"tools/fleetplan-apply"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back(spec_);
    return RunTool(argv);
  }

  std::string dir_;
  std::string spec_;
};

TEST_F(ApplyLockTest, TwoAppliesStartedTogetherRunOneAtATime) {
  ToolResult first, second;
  std::thread other([&] { second = Apply({}); });
  first = Apply({});
  other.join();
  // Exactly one ran; the other changed nothing and named the holder.
  const ToolResult& ran = first.status == 0 ? first : second;
  const ToolResult& refused = first.status == 0 ? second : first;
  ASSERT_EQ(ran.status, 0) << first.output << "\n---\n" << second.output;
  EXPECT_EQ(refused.status, kExitLocked) << refused.output;
  EXPECT_THAT(refused.output, HasSubstr("spec 'locked'"));
  EXPECT_THAT(refused.output, HasSubstr(absl::StrCat("is locked by ")));
  EXPECT_THAT(refused.output, HasSubstr(absl::StrCat("@", ThisHost(), ", pid ")));
  EXPECT_THAT(refused.output, Not(HasSubstr("cannot stat")));
  EXPECT_EQ(Leftovers(), "");
  EXPECT_FALSE(ReadFileToString(LockPath()).ok()) << "released";
}

TEST_F(ApplyLockTest, LockTimeoutWaitsForTheHolderThenApplies) {
  ToolResult first, second;
  std::thread other([&] { second = Apply({"--lock-timeout=120s"}); });
  first = Apply({"--lock-timeout=120s"});
  other.join();
  EXPECT_EQ(first.status, 0) << first.output;
  EXPECT_EQ(second.status, 0) << second.output;
  EXPECT_THAT(first.output + second.output, HasSubstr("waiting for spec 'locked'"));
  EXPECT_EQ(Leftovers(), "");
  EXPECT_FALSE(ReadFileToString(LockPath()).ok()) << "released";
}

TEST_F(ApplyLockTest, ALiveHolderIsWaitedForUntilItLetsGo) {
  // This test holds the lock as a live process of this host would.
  ASSERT_THAT(WriteFileAtomic(LockPath(), LockJson(ThisHost(), getpid()), 0600), IsOk());
  ToolResult refused = Apply({});
  EXPECT_EQ(refused.status, kExitLocked) << refused.output;
  EXPECT_THAT(refused.output,
              HasSubstr(absl::StrCat("is locked by alice@", ThisHost(), ", pid ", getpid())));
  EXPECT_FALSE(ReadFileToString(dir_ + "/work-a/.fleetplan/nodes/a/steps/sync").ok())
      << "nothing written";
  std::thread release([&] {
    absl::SleepFor(absl::Seconds(2));
    unlink(LockPath().c_str());
  });
  ToolResult waited = Apply({"--lock-timeout=60s"});
  release.join();
  EXPECT_EQ(waited.status, 0) << waited.output;
  EXPECT_THAT(waited.output, HasSubstr("waiting for spec 'locked'"));
}

TEST_F(ApplyLockTest, TheLockOfAProcessGoneFromThisHostIsTakenOver) {
  // Above any pid_max: no such process.
  ASSERT_THAT(WriteFileAtomic(LockPath(), LockJson(ThisHost(), 999999999), 0600), IsOk());
  ToolResult apply = Apply({});
  EXPECT_EQ(apply.status, 0) << apply.output;
  EXPECT_THAT(apply.output, HasSubstr("took over spec 'locked'"));
  EXPECT_THAT(apply.output, HasSubstr("pid 999999999"));
  EXPECT_FALSE(ReadFileToString(LockPath()).ok()) << "released";
}

TEST_F(ApplyLockTest, ForceUnlockRemovesTheLockOfAnotherHost) {
  ASSERT_THAT(WriteFileAtomic(LockPath(), LockJson("elsewhere.example", 4242), 0600), IsOk());
  ToolResult refused = Apply({});
  EXPECT_EQ(refused.status, kExitLocked) << refused.output;
  EXPECT_THAT(refused.output, HasSubstr("alice@elsewhere.example, pid 4242"));
  ToolResult stop = RunTool({"tools/fleetplan-stop", spec_});
  EXPECT_EQ(stop.status, kExitLocked) << stop.output;
  ToolResult stop_json = RunTool({"tools/fleetplan-stop", "--json", spec_});
  EXPECT_EQ(stop_json.status, kExitLocked) << stop_json.output;
  EXPECT_THAT(stop_json.output, HasSubstr("\"error\": \"spec 'locked'"));

  ToolResult unlocked = Apply({"--force-unlock"});
  EXPECT_EQ(unlocked.status, 0) << unlocked.output;
  EXPECT_THAT(unlocked.output,
              HasSubstr("removed the lock of spec 'locked'"));
  EXPECT_THAT(unlocked.output, HasSubstr("held by alice@elsewhere.example, pid 4242"));
  EXPECT_FALSE(ReadFileToString(LockPath()).ok());
  ToolResult apply = Apply({});
  EXPECT_EQ(apply.status, 0) << apply.output;
  ToolResult again = Apply({"--force-unlock"});
  EXPECT_THAT(again.output, HasSubstr("was not locked"));
}

}  // namespace
}  // namespace fleetplan
