#include "tools/apply/state_lock.h"

#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

// ConnectionLockStore is tested for real, through apply and stop on the
// local transport (tests/apply_lock_test.cc).

// A lock kept in memory; `on_create` runs before each creation (another
// holder coming or going between two tries).
class FakeStore : public LockStore {
 public:
  absl::StatusOr<bool> CreateExclusive(absl::string_view content) override {
    if (on_create) on_create();
    if (no_folder) return absl::FailedPreconditionError("cannot make the folder");
    if (content_.has_value()) return false;
    content_ = std::string(content);
    return true;
  }
  absl::StatusOr<std::string> Read() override {
    if (!content_.has_value()) return absl::NotFoundError("no lock");
    return *content_;
  }
  absl::StatusOr<bool> RemoveIf(absl::string_view expected) override {
    if (!content_.has_value() || *content_ != expected) return false;
    content_.reset();
    return true;
  }
  absl::Status Remove() override {
    content_.reset();
    return absl::OkStatus();
  }
  std::optional<std::string> content_;
  std::function<void()> on_create;
  bool no_folder = false;  // the lock's folder cannot be made
};

StateLockHolder Holder(const std::string& host, int pid) {
  return {host, "alice", pid, absl::FromUnixSeconds(1764107675), absl::StrCat("run-", pid)};
}

// A clock that sleeps by moving on; `gone` holders are dead.
struct FakeWorld {
  absl::Time now = absl::FromUnixSeconds(1764107675);
  std::vector<int> gone;
  std::vector<std::string> said;
  int sleeps = 0;
  std::function<void()> on_sleep;
  bool interrupted = false;

  LockEnvironment Env() {
    LockEnvironment env;
    env.now = [this] { return now; };
    env.sleep = [this](absl::Duration d) {
      ++sleeps;
      now += d;
      if (on_sleep) on_sleep();
      return !interrupted;
    };
    env.holder_gone = [this](const StateLockHolder& holder) {
      return holder.host == "here" &&
             std::find(gone.begin(), gone.end(), holder.pid) != gone.end();
    };
    env.say = [this](absl::string_view message) { said.emplace_back(message); };
    return env;
  }
};

TEST(StateLockTest, TakesAFreeLockAndGivesItBack) {
  FakeStore store;
  FakeWorld world;
  {
    StateLock lock(store, Holder("here", 10), world.Env(), "spec 'x'");
    ASSERT_THAT(lock.Acquire(absl::ZeroDuration()), IsOk());
    EXPECT_TRUE(lock.held());
    FP_ASSERT_OK_AND_ASSIGN(StateLockHolder held, ParseStateLock(*store.content_));
    EXPECT_EQ(held.pid, 10);
    ASSERT_THAT(lock.Release(), IsOk());
    EXPECT_FALSE(store.content_.has_value());
    ASSERT_THAT(lock.Acquire(absl::ZeroDuration()), IsOk());
  }
  // Released when it goes out of scope.
  EXPECT_FALSE(store.content_.has_value());
}

// An unwritable workdir: nothing there to race for, so no lock is held
// and none is waited for; giving it back removes nothing.
TEST(StateLockTest, WhereNoLockCanBeMadeNoneIsHeldOrWaitedFor) {
  FakeStore store;
  store.no_folder = true;
  FakeWorld world;
  StateLock lock(store, Holder("here", 10), world.Env(), "spec 'x'");
  ASSERT_THAT(lock.Acquire(absl::Seconds(30)), IsOk());
  EXPECT_FALSE(lock.held());
  EXPECT_EQ(world.sleeps, 0);
  EXPECT_THAT(lock.Release(), IsOk());
  EXPECT_FALSE(store.content_.has_value());
}

TEST(StateLockTest, RefusesAtOnceNamingTheHolder) {
  FakeStore store;
  store.content_ = SerializeStateLock(Holder("there", 77));
  FakeWorld world;
  StateLock lock(store, Holder("here", 10), world.Env(), "spec 'x'");
  absl::Status status = lock.Acquire(absl::ZeroDuration());
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kAborted,
                               HasSubstr("spec 'x' is locked by alice@there, pid 77")));
  EXPECT_THAT(status.message(), HasSubstr("--force-unlock"));
  EXPECT_EQ(world.sleeps, 0);
  EXPECT_FALSE(lock.held());
  // Its failure leaves the other's lock alone.
  EXPECT_THAT(lock.Release(), IsOk());
  EXPECT_THAT(*store.content_, HasSubstr("\"pid\":77"));
}

TEST(StateLockTest, WaitsForTheHolderThenTakesIt) {
  FakeStore store;
  store.content_ = SerializeStateLock(Holder("there", 77));
  FakeWorld world;
  world.on_sleep = [&] {
    if (world.sleeps == 3) store.content_.reset();  // the other apply ends
  };
  StateLock lock(store, Holder("here", 10), world.Env(), "spec 'x'");
  ASSERT_THAT(lock.Acquire(absl::Seconds(30)), IsOk());
  EXPECT_EQ(world.sleeps, 3);
  ASSERT_EQ(world.said.size(), 1u);
  EXPECT_THAT(world.said[0], HasSubstr("waiting for spec 'x', locked by alice@there, pid 77"));
}

TEST(StateLockTest, GivesUpAfterTheTimeout) {
  FakeStore store;
  store.content_ = SerializeStateLock(Holder("there", 77));
  FakeWorld world;
  absl::Time start = world.now;
  StateLock lock(store, Holder("here", 10), world.Env(), "spec 'x'");
  EXPECT_THAT(lock.Acquire(absl::Seconds(5)),
              StatusIs(absl::StatusCode::kAborted, HasSubstr("waited 5s")));
  EXPECT_EQ(world.now - start, absl::Seconds(5));
}

TEST(StateLockTest, AnInterruptedWaitIsCancelled) {
  FakeStore store;
  store.content_ = SerializeStateLock(Holder("there", 77));
  FakeWorld world;
  world.interrupted = true;
  StateLock lock(store, Holder("here", 10), world.Env(), "spec 'x'");
  EXPECT_THAT(lock.Acquire(absl::Minutes(5)), StatusIs(absl::StatusCode::kCancelled));
  EXPECT_TRUE(store.content_.has_value());
}

TEST(StateLockTest, TakesOverTheLockOfAProcessGoneFromThisHost) {
  FakeStore store;
  store.content_ = SerializeStateLock(Holder("here", 55));
  FakeWorld world;
  world.gone = {55};
  StateLock lock(store, Holder("here", 10), world.Env(), "spec 'x'");
  ASSERT_THAT(lock.Acquire(absl::ZeroDuration()), IsOk());
  EXPECT_THAT(*store.content_, HasSubstr("\"pid\":10"));
  ASSERT_EQ(world.said.size(), 1u);
  EXPECT_THAT(world.said[0], HasSubstr("took over spec 'x' from alice@here, pid 55"));
}

TEST(StateLockTest, NeverGuessesAboutAnotherHost) {
  FakeStore store;
  store.content_ = SerializeStateLock(Holder("there", 55));
  FakeWorld world;
  world.gone = {55};  // gone here; but it ran there
  StateLock lock(store, Holder("here", 10), world.Env(), "spec 'x'");
  EXPECT_THAT(lock.Acquire(absl::ZeroDuration()), StatusIs(absl::StatusCode::kAborted));
}

TEST(StateLockTest, AnUnreadableLockIsHeldAndShown) {
  FakeStore store;
  store.content_ = "garbage";
  FakeWorld world;
  StateLock lock(store, Holder("here", 10), world.Env(), "spec 'x'");
  EXPECT_THAT(lock.Acquire(absl::ZeroDuration()),
              StatusIs(absl::StatusCode::kAborted, HasSubstr("unreadable lock 'garbage'")));
}

TEST(StateLockTest, ReleaseLeavesALockThatIsNoLongerItsOwn) {
  FakeStore store;
  FakeWorld world;
  StateLock lock(store, Holder("here", 10), world.Env(), "spec 'x'");
  ASSERT_THAT(lock.Acquire(absl::ZeroDuration()), IsOk());
  // --force-unlock, then another apply took it.
  FP_ASSERT_OK_AND_ASSIGN(std::optional<std::string> removed, ForceUnlock(store));
  ASSERT_TRUE(removed.has_value());
  EXPECT_THAT(*removed, HasSubstr("alice@here, pid 10"));
  store.content_ = SerializeStateLock(Holder("there", 77));
  ASSERT_THAT(lock.Release(), IsOk());
  EXPECT_THAT(*store.content_, HasSubstr("\"pid\":77"));
}

TEST(StateLockTest, ForceUnlockOfNoLockSaysSo) {
  FakeStore store;
  FP_ASSERT_OK_AND_ASSIGN(std::optional<std::string> removed, ForceUnlock(store));
  EXPECT_FALSE(removed.has_value());
}

TEST(HolderGoneTest, OnlyADeadPidOnThisHost) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  EXPECT_FALSE(HolderGoneFromThisHost(Holder(host, getpid())));
  EXPECT_FALSE(HolderGoneFromThisHost(Holder("another-host.example", 999999999)));
  EXPECT_TRUE(HolderGoneFromThisHost(Holder(host, 999999999)));
}

}  // namespace
}  // namespace fleetplan
