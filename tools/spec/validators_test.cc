#include "tools/spec/validators.h"

#include <string>

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

TEST(ValidatorsTest, Addresses) {
  for (const char* good : {"104.171.200.62", "10.0.0.5", "node-1", "node-1.example.com",
                           "localhost", "::1", "fe80::1", "2001:db8::8a2e:370:7334",
                           "2001:0db8:0000:0000:0000:ff00:0042:8329", "::ffff:10.0.0.1"}) {
    EXPECT_TRUE(IsValidAddress(good)) << good;
  }
  for (const char* bad : {"", "256.1.1.1", "1.2.3", "-node", "node_1", "a b", "1::2::3",
                          "$(rm -rf ~)", "host;id"}) {
    EXPECT_FALSE(IsValidAddress(bad)) << bad;
  }
}

TEST(ValidatorsTest, EnvNames) {
  EXPECT_TRUE(IsValidEnvName("NCCL_DEBUG"));
  EXPECT_TRUE(IsValidEnvName("_x1"));
  EXPECT_FALSE(IsValidEnvName("1X"));
  EXPECT_FALSE(IsValidEnvName("A-B"));
  EXPECT_FALSE(IsValidEnvName(""));
}

TEST(ValidatorsTest, UserNames) {
  EXPECT_TRUE(IsValidUserName("ubuntu"));
  EXPECT_TRUE(IsValidUserName("ec2-user"));
  EXPECT_TRUE(IsValidUserName("_svc"));
  EXPECT_FALSE(IsValidUserName("Root"));
  EXPECT_FALSE(IsValidUserName("-x"));
  EXPECT_FALSE(IsValidUserName("a b"));
}

TEST(ValidatorsTest, BazelLabels) {
  EXPECT_TRUE(IsValidBazelLabel("//trainer:train"));
  EXPECT_TRUE(IsValidBazelLabel("//trainer"));
  EXPECT_TRUE(IsValidBazelLabel("//a/b:c-d"));
  EXPECT_FALSE(IsValidBazelLabel("//"));
  EXPECT_FALSE(IsValidBazelLabel("//a b:c"));
  EXPECT_FALSE(IsValidBazelLabel("trainer:train"));
}

TEST(ValidatorsTest, IfnameSpecs) {
  for (const char* good : {"auto", "ens3", "eth,ib", "^lo,docker0", "=eth0"}) {
    EXPECT_TRUE(IsValidIfnameSpec(good)) << good;
  }
  for (const char* bad : {"", "^", "eth0 ", "a,,b", "$(x)"}) {
    EXPECT_FALSE(IsValidIfnameSpec(bad)) << bad;
  }
}

TEST(ValidatorsTest, PathsAndNames) {
  EXPECT_TRUE(IsLowercaseIdentifier("ssh"));
  EXPECT_FALSE(IsLowercaseIdentifier("SSH"));
  EXPECT_FALSE(IsLowercaseIdentifier("1ssh"));
}

TEST(ValidatorsTest, ControlCharacters) {
  using std::string_literals::operator""s;
  const size_t npos = absl::string_view::npos;
  EXPECT_EQ(FindControlCharacter("/home/ubuntu/caf\xc3\xa9 project", false), npos);
  EXPECT_EQ(FindControlCharacter("a\0b"s, false), 1u);
  EXPECT_EQ(FindControlCharacter("a\0b"s, true), 1u) << "NUL is never allowed";
  EXPECT_EQ(FindControlCharacter("ab\x1b[31m", true), 2u);
  EXPECT_EQ(FindControlCharacter("abc\x7f", true), 3u);
  EXPECT_EQ(FindControlCharacter("x\r\n", true), 1u);
  EXPECT_EQ(FindControlCharacter("tab\tline\n", false), 3u);
  EXPECT_EQ(FindControlCharacter("tab\tline\n", true), npos);
}

}  // namespace
}  // namespace fleetplan
