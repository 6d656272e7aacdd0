#include "plugins/slurm/shared_workdir.h"

#include "absl/strings/str_cat.h"

namespace fleetplan {

absl::Status SharedWorkdir::Put(
    const std::vector<FileToSend>& files, const std::string& root,
    const std::function<absl::Status(const std::vector<FileToSend>&)>& put) {
  absl::MutexLock lock(&mu_);
  auto known = shared_.find(root);
  if (known == shared_.end()) {
    absl::StatusOr<bool> shared = probe_(root);
    if (!shared.ok()) return shared.status();
    known = shared_.emplace(root, *shared).first;
  }
  if (!known->second) {
    // Every host has its own copy: no reason to wait for the others.
    mu_.Unlock();
    absl::Status status = put(files);
    mu_.Lock();
    return status;
  }
  std::vector<FileToSend> missing;
  std::vector<std::string> keys;
  for (const FileToSend& file : files) {
    std::string key = absl::StrCat(root, std::string(1, '\0'), file.path, std::string(1, '\0'),
                                   file.local_path, std::string(1, '\0'), file.size);
    if (put_.count(key) != 0) continue;
    missing.push_back(file);
    keys.push_back(std::move(key));
  }
  if (missing.empty()) return absl::OkStatus();
  absl::Status status = put(missing);
  if (status.ok()) put_.insert(keys.begin(), keys.end());
  return status;
}

}  // namespace fleetplan
