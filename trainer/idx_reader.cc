#include "trainer/idx_reader.h"

#include <sys/stat.h>
#include <zlib.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace fleetplan::trainer {
namespace {

constexpr uint8_t kUnsignedByteType = 0x08;
constexpr int64_t kMaxElements = int64_t{1} << 32;

struct GzCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

// Reads exactly `size` bytes; false on a short read or an error.
bool ReadFully(gzFile file, void* buffer, int64_t size) {
  auto* out = static_cast<char*>(buffer);
  while (size > 0) {
    // gzread takes an unsigned int count; read large arrays in chunks.
    const unsigned chunk = static_cast<unsigned>(std::min<int64_t>(size, 1 << 30));
    const int n = gzread(file, out, chunk);
    if (n <= 0) return false;
    out += n;
    size -= n;
  }
  return true;
}

}  // namespace

absl::StatusOr<IdxArray> ReadIdxFile(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": no such file"));
  }
  GzFile file(gzopen(path.c_str(), "rb"));
  if (file == nullptr) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  }
  uint8_t magic[4];
  if (!ReadFully(file.get(), magic, sizeof(magic)) || magic[0] != 0 ||
      magic[1] != 0) {
    return absl::DataLossError(absl::StrCat(path, ": not an IDX file"));
  }
  if (magic[2] != kUnsignedByteType) {
    return absl::DataLossError(absl::StrCat(
        path, ": IDX element type 0x", absl::Hex(magic[2]),
        " is not unsigned byte (0x08)"));
  }
  IdxArray array;
  int64_t elements = 1;
  for (int i = 0; i < magic[3]; ++i) {
    uint8_t be[4];
    if (!ReadFully(file.get(), be, sizeof(be))) {
      return absl::DataLossError(absl::StrCat(path, ": truncated header"));
    }
    // Dimensions are big-endian 32-bit integers.
    const int64_t dim = (int64_t{be[0]} << 24) | (be[1] << 16) | (be[2] << 8) | be[3];
    array.dims.push_back(dim);
    elements *= dim;
    if (elements > kMaxElements) {
      return absl::DataLossError(absl::StrCat(path, ": implausible size"));
    }
  }
  array.data.resize(elements);
  if (!ReadFully(file.get(), array.data.data(), elements)) {
    return absl::DataLossError(absl::StrCat(
        path, ": truncated data (expected ", elements, " bytes)"));
  }
  return array;
}

}  // namespace fleetplan::trainer
