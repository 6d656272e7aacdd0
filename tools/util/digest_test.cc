#include "tools/util/digest.h"

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

TEST(DigestTest, IsStableAndHex) {
  std::string digest = DigestHex("fleetplan");
  EXPECT_EQ(digest.size(), 32u);
  EXPECT_EQ(digest, DigestHex("fleetplan"));
  EXPECT_NE(digest, DigestHex("fleetplan "));
  EXPECT_EQ(digest.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(DigestTest, FieldsAreLengthPrefixed) {
  EXPECT_NE(Digester().Add("ab").Add("c").Hex(), Digester().Add("a").Add("bc").Hex());
  EXPECT_EQ(Digester().Add("ab").Add("c").Hex(), Digester().Add("ab").Add("c").Hex());
}

TEST(DigestTest, StreamingEqualsOneShot) {
  Digester streamed;
  streamed.AddBytes("flee", 4).AddBytes("tplan", 5);
  EXPECT_EQ(streamed.Hex(), DigestHex("fleetplan"));
}

}  // namespace
}  // namespace fleetplan
