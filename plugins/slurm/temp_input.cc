#include "plugins/slurm/temp_input.h"

#include <stdlib.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "tools/process/files.h"
#include "tools/util/status_macros.h"

namespace fleetplan {

absl::StatusOr<TempInput> TempInput::Of(absl::string_view content) {
  const char* tmp = getenv("TMPDIR");
  std::string path = absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp",
                                  "/fleetplan-slurm-XXXXXX");
  int fd = mkstemp(path.data());
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot create ", path));
  close(fd);
  TempInput input(path);
  FP_RETURN_IF_ERROR(WriteFileAtomic(path, content, 0600));
  return input;
}

TempInput::~TempInput() {
  if (!path_.empty()) unlink(path_.c_str());
}

}  // namespace fleetplan
