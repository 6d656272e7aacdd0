#include "tools/util/human_units.h"

#include "gtest/gtest.h"

namespace fleetplan {
namespace {

TEST(HumanUnitsTest, BytesInBinaryUnits) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(uint64_t{3} << 30), "3.0 GiB");
}

TEST(HumanUnitsTest, DurationsInTheTwoUnitsThatMatter) {
  EXPECT_EQ(FormatElapsed(absl::Milliseconds(340)), "0.3s");
  EXPECT_EQ(FormatElapsed(absl::Seconds(41.4)), "41s");
  EXPECT_EQ(FormatElapsed(absl::Seconds(72)), "1m 12s");
  EXPECT_EQ(FormatElapsed(absl::Hours(2) + absl::Minutes(5) + absl::Seconds(9)), "2h 5m");
}

TEST(HumanUnitsTest, CountsWithThousandsSeparated) {
  EXPECT_EQ(FormatCount(469), "469");
  EXPECT_EQ(FormatCount(5450), "5,450");
  EXPECT_EQ(FormatCount(1234567), "1,234,567");
  EXPECT_EQ(FormatCount(-1000), "-1,000");
}

}  // namespace
}  // namespace fleetplan
