#include "tools/util/timed_cancel.h"

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

TEST(TimedCancelTest, FiresAfterTheTimeout) {
  absl::Notification parent;
  absl::Time start = absl::Now();
  TimedCancel cancel(&parent, absl::Milliseconds(100));
  ASSERT_NE(cancel.get(), &parent);
  EXPECT_FALSE(cancel.get()->HasBeenNotified());
  EXPECT_TRUE(cancel.get()->WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(100));
  EXPECT_TRUE(cancel.timed_out());
}

TEST(TimedCancelTest, FiresWithTheParentWithoutTimingOut) {
  absl::Notification parent;
  TimedCancel cancel(&parent, absl::Seconds(60));
  parent.Notify();
  EXPECT_TRUE(cancel.get()->WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_FALSE(cancel.timed_out());
}

TEST(TimedCancelTest, EndingFirstLeavesItUnfired) {
  absl::Notification parent;
  absl::Time start = absl::Now();
  {
    TimedCancel cancel(&parent, absl::Seconds(60));
    EXPECT_FALSE(cancel.get()->HasBeenNotified());
  }
  EXPECT_LT(absl::Now() - start, absl::Seconds(5)) << "the watcher stops with it";
}

TEST(TimedCancelTest, WithoutATimeoutItIsTheParent) {
  absl::Notification parent;
  TimedCancel cancel(&parent, absl::InfiniteDuration());
  EXPECT_EQ(cancel.get(), &parent);
  TimedCancel none(nullptr, absl::InfiniteDuration());
  EXPECT_EQ(none.get(), nullptr);
  EXPECT_FALSE(none.timed_out());
}

}  // namespace
}  // namespace fleetplan
