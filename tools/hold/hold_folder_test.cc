#include "tools/hold/hold_folder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

std::string FreshFolder(const std::string& name, mode_t mode) {
  std::string path = testing::TempDir() + "/" + name;
  rmdir(path.c_str());
  EXPECT_EQ(mkdir(path.c_str(), mode), 0);
  chmod(path.c_str(), mode);
  return path;
}

TEST(HoldFolderTest, MadePrivateUnderTheRuntimeFolder) {
  std::string runtime = FreshFolder("runtime", 0700);
  setenv("XDG_RUNTIME_DIR", runtime.c_str(), 1);
  absl::StatusOr<std::string> folder = HoldFolder();
  ASSERT_TRUE(folder.ok()) << folder.status();
  EXPECT_EQ(*folder, runtime + "/fleetplan");
  struct stat info;
  ASSERT_EQ(stat(folder->c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
}

TEST(HoldFolderTest, RefusesAFolderOthersMayEnter) {
  std::string runtime = FreshFolder("open_runtime", 0700);
  std::string open = FreshFolder("open_runtime/fleetplan", 0755);
  setenv("XDG_RUNTIME_DIR", runtime.c_str(), 1);
  absl::StatusOr<std::string> folder = HoldFolder();
  EXPECT_TRUE(absl::IsPermissionDenied(folder.status())) << folder.status();
  EXPECT_TRUE(absl::IsPermissionDenied(CheckPrivateFolder(open, geteuid())));
}

TEST(HoldFolderTest, RefusesAnotherUsersFolderOrALink) {
  std::string mine = FreshFolder("mine", 0700);
  EXPECT_TRUE(CheckPrivateFolder(mine, geteuid()).ok());
  EXPECT_TRUE(absl::IsPermissionDenied(CheckPrivateFolder(mine, geteuid() + 1)));
  std::string link = testing::TempDir() + "/link";
  unlink(link.c_str());
  ASSERT_EQ(symlink(mine.c_str(), link.c_str()), 0);
  EXPECT_TRUE(absl::IsPermissionDenied(CheckPrivateFolder(link, geteuid())));
}

TEST(HoldFolderTest, TheIdentityChangesWithAnyNodesIdentity) {
  HoldSet set;
  set.nodes["a"] = HoldKey{"user-a key-1", absl::Minutes(10)};
  set.nodes["b"] = HoldKey{"user-b key-1", absl::Seconds(3)};
  HoldSet other_key = set;
  other_key.nodes["b"].identity = "user-b key-2";
  HoldSet renamed;
  renamed.nodes["c"] = set.nodes["a"];
  renamed.nodes["b"] = set.nodes["b"];
  EXPECT_EQ(set.Identity(), HoldSet(set).Identity());
  EXPECT_NE(set.Identity(), other_key.Identity());
  EXPECT_NE(set.Identity(), renamed.Identity());
  // Another wire version: another holder, never one refusing this one.
  EXPECT_EQ(set.Identity(), set.Identity(kHoldGreeting));
  EXPECT_NE(set.Identity(), set.Identity("fleetplan-hold 2"));
  EXPECT_EQ(set.Persist(), absl::Minutes(10));
  EXPECT_EQ(HoldSocketPath("/run/f", set.Identity()), "/run/f/" + set.Identity() + ".sock");
}

}  // namespace
}  // namespace fleetplan
