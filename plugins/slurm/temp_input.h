#ifndef FLEETPLAN_PLUGINS_SLURM_TEMP_INPUT_H_
#define FLEETPLAN_PLUGINS_SLURM_TEMP_INPUT_H_

// A file on this machine holding some content, removed with the object:
// what a Slurm client command reads (a job step's stdin, sbatch's script).

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

class TempInput {
 public:
  // Under $TMPDIR (default /tmp), mode 0600.
  static absl::StatusOr<TempInput> Of(absl::string_view content);
  TempInput(TempInput&& other) : path_(std::move(other.path_)) { other.path_.clear(); }
  TempInput(const TempInput&) = delete;
  TempInput& operator=(const TempInput&) = delete;
  ~TempInput();
  const std::string& path() const { return path_; }

 private:
  explicit TempInput(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SLURM_TEMP_INPUT_H_
