#include "tools/apply/authorize_key.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/process/files.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

TEST(AuthorizeKeyTest, FindsTheKeyInOutput) {
  EXPECT_EQ(PublicKeyFromOutput("Generating\nssh-ed25519 AAAA me@h\n"),
            "ssh-ed25519 AAAA me@h");
  EXPECT_FALSE(PublicKeyFromOutput("no key here\n").has_value());
}

// Runs the command through /bin/sh with HOME in a temp folder.
class AuthorizeKeyShellTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        absl::StrCat(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp", "/homeXXXXXX");
    home_ = mkdtemp(pattern.data());
    keys_ = home_ + "/.ssh/authorized_keys";
  }
  int Run(const std::string& key) {
    std::string command =
        absl::StrCat("HOME='", home_, "' /bin/sh -c '", "eval \"$0\"", "' ",
                     "\"$(cat '", home_, "/cmd')\"");
    EXPECT_THAT(WriteFileAtomic(home_ + "/cmd", AuthorizeKeyCommand(key), 0644), IsOk());
    return std::system(command.c_str());
  }
  std::string home_, keys_;
};

TEST_F(AuthorizeKeyShellTest, AppendsOnceKeepsOtherLinesAndMode) {
  const std::string key = "ssh-ed25519 AAAA it's \"chief\" $(touch /tmp/pwned)";
  ASSERT_THAT(WriteFileAtomic(keys_, "ssh-rsa OTHER user@x", 0644), IsOk());
  ASSERT_EQ(Run(key), 0);
  ASSERT_EQ(Run(key), 0);
  FP_ASSERT_OK_AND_ASSIGN(std::string content, ReadFileToString(keys_));
  EXPECT_EQ(content, "ssh-rsa OTHER user@x\n" + key + "\n");
  struct stat st;
  ASSERT_EQ(stat(keys_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat((home_ + "/.ssh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(AuthorizeKeyShellTest, CreatesTheFileWhenMissing) {
  ASSERT_EQ(Run("ssh-ed25519 BBBB"), 0);
  FP_ASSERT_OK_AND_ASSIGN(std::string content, ReadFileToString(keys_));
  EXPECT_EQ(content, "ssh-ed25519 BBBB\n");
}

}  // namespace
}  // namespace fleetplan
