#include "plugins/ssh/upload_window.h"

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

TEST(UploadWindowTest, AnEmptyWindowTakesAnyRequest) {
  UploadWindow window(/*max_bytes=*/100, /*max_requests=*/2);
  EXPECT_TRUE(window.empty());
  EXPECT_FALSE(window.MustWaitFor(1000)) << "else a large chunk could never be sent";
}

TEST(UploadWindowTest, BoundsTheBytesInFlight) {
  UploadWindow window(100, 10);
  window.Add({1, 0, 60});
  EXPECT_FALSE(window.MustWaitFor(40));
  EXPECT_TRUE(window.MustWaitFor(41));
  window.Add({2, 0, 40});
  EXPECT_EQ(window.bytes(), 100u);
  EXPECT_FALSE(window.MustWaitFor(0)) << "requests without data still fit";
}

TEST(UploadWindowTest, BoundsTheRequestsInFlight) {
  UploadWindow window(100, 2);
  window.Add({1, 0, 0});
  EXPECT_FALSE(window.MustWaitFor(0));
  window.Add({2, 1, 0});
  EXPECT_TRUE(window.MustWaitFor(0));
}

TEST(UploadWindowTest, TakesTheOldestFirstAndFreesItsBytes) {
  UploadWindow window(100, 10);
  window.Add({7, 0, 60});
  window.Add({8, 1, 30});
  UploadWindow::Request oldest = window.TakeOldest();
  EXPECT_EQ(oldest.id, 7u);
  EXPECT_EQ(oldest.upload, 0u);
  EXPECT_EQ(window.bytes(), 30u);
  EXPECT_FALSE(window.MustWaitFor(70));
  EXPECT_EQ(window.TakeOldest().id, 8u);
  EXPECT_TRUE(window.empty());
  EXPECT_EQ(window.bytes(), 0u);
}

}  // namespace
}  // namespace fleetplan
