#ifndef FLEETPLAN_TRAINER_IDX_READER_H_
#define FLEETPLAN_TRAINER_IDX_READER_H_

// Reader for IDX files of unsigned bytes (the MNIST family's format), gzipped
// or not, read through zlib so the packaged .gz files need no unpack step.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fleetplan::trainer {

struct IdxArray {
  std::vector<int64_t> dims;  // e.g. {60000, 28, 28}
  std::vector<uint8_t> data;  // row-major, product(dims) bytes
};

// Reads the IDX file at `path`. NotFound when it does not exist; DataLoss
// for a bad magic number, a type other than unsigned byte, or a short file.
absl::StatusOr<IdxArray> ReadIdxFile(const std::string& path);

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_IDX_READER_H_
