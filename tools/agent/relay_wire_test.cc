#include "tools/agent/relay_wire.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace fleetplan {
namespace {

TEST(RelayWireTest, TheMagicLineNamesTheServer) {
  absl::StatusOr<std::string> identity = ParseRelayMagic(absl::StrCat(kRelayMagic, " host-1-2"));
  ASSERT_TRUE(identity.ok());
  EXPECT_EQ(*identity, "host-1-2");
  for (absl::string_view line : {"", "SSH-2.0-OpenSSH_9.6", "FPRELAY3", "FPRELAY3 a b"}) {
    absl::StatusOr<std::string> other = ParseRelayMagic(line);
    EXPECT_TRUE(absl::IsUnavailable(other.status())) << line;
  }
  EXPECT_EQ(ParseRelayMagic("x\x01").status().message(),
            "what answered is not a relay server (it said \"x\\x01\")");
}

TEST(RelayWireTest, TheManifestSizeIsBounded) {
  EXPECT_EQ(*ParseManifestSize("0"), 0u);
  EXPECT_EQ(*ParseManifestSize(absl::StrCat(kMaxRelayManifest)), kMaxRelayManifest);
  for (absl::string_view line : {"", "-1", "12x", "18446744073709551615", "268435457"}) {
    EXPECT_TRUE(absl::IsUnavailable(ParseManifestSize(line).status())) << line;
  }
}

TEST(RelayWireTest, WantedEntriesAreIndexesBelowTheCount) {
  EXPECT_EQ(*ParseWantedEntries("", 3), std::vector<size_t>{});
  EXPECT_EQ(*ParseWantedEntries("0 2  1", 3), (std::vector<size_t>{0, 2, 1}));
  absl::StatusOr<std::vector<size_t>> beyond = ParseWantedEntries("0 3", 3);
  EXPECT_EQ(beyond.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(beyond.status().message(), "asked for entry '3'");
  EXPECT_EQ(ParseWantedEntries("-1", 3).status().message(), "asked for entry '-1'");
  EXPECT_EQ(ParseWantedEntries("1\x01", 3).status().message(), "asked for entry '1\\x01'");
  EXPECT_FALSE(ParseWantedEntries("99999999999999999999999", 3).ok());
  EXPECT_FALSE(ParseWantedEntries("0", 0).ok());
}

}  // namespace
}  // namespace fleetplan
