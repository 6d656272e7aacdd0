#include "trainer/idx_reader.h"

#include <zlib.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan::trainer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

void WriteGz(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, bytes.data(), bytes.size()),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

TEST(IdxReaderTest, ReadsAGzippedThreeDimensionalArray) {
  // 2 images of 2x3 bytes; a dimension above 255 checks the byte order.
  std::vector<uint8_t> bytes = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 3};
  for (uint8_t v = 0; v < 12; ++v) bytes.push_back(v * 20);
  const std::string path = TempPath("images-idx3-ubyte.gz");
  WriteGz(path, bytes);

  FP_ASSERT_OK_AND_ASSIGN(IdxArray array, ReadIdxFile(path));
  EXPECT_THAT(array.dims, ElementsAre(2, 2, 3));
  ASSERT_EQ(array.data.size(), 12u);
  EXPECT_EQ(array.data[0], 0);
  EXPECT_EQ(array.data[11], 220);
}

TEST(IdxReaderTest, ReadsBigEndianDimensions) {
  std::vector<uint8_t> bytes = {0, 0, 8, 1, 0, 0, 1, 2};  // 258 labels
  for (int i = 0; i < 258; ++i) bytes.push_back(i % 10);
  const std::string path = TempPath("labels-idx1-ubyte.gz");
  WriteGz(path, bytes);

  FP_ASSERT_OK_AND_ASSIGN(IdxArray array, ReadIdxFile(path));
  EXPECT_THAT(array.dims, ElementsAre(258));
  EXPECT_EQ(array.data[257], 7);
}

TEST(IdxReaderTest, TruncatedDataIsDataLoss) {
  const std::string path = TempPath("short.gz");
  WriteGz(path, {0, 0, 8, 1, 0, 0, 0, 5, 1, 2});
  EXPECT_THAT(ReadIdxFile(path),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("truncated data (expected 5 bytes)")));
}

TEST(IdxReaderTest, WrongElementTypeIsDataLoss) {
  const std::string path = TempPath("floats.gz");
  WriteGz(path, {0, 0, 0x0D, 1, 0, 0, 0, 1, 0, 0, 0, 0});
  EXPECT_THAT(ReadIdxFile(path), StatusIs(absl::StatusCode::kDataLoss,
                                          HasSubstr("not unsigned byte")));
}

TEST(IdxReaderTest, MissingFileIsNotFound) {
  EXPECT_THAT(ReadIdxFile(TempPath("absent.gz")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("absent.gz")));
}

}  // namespace
}  // namespace fleetplan::trainer
