#include "plugins/slurm/shared_workdir.h"

#include "absl/strings/str_cat.h"

namespace fleetplan {

namespace {

uint64_t SizeOf(const std::vector<FileToSend>& files) {
  uint64_t bytes = 0;
  for (const FileToSend& file : files) bytes += file.size;
  return bytes;
}

}  // namespace

absl::StatusOr<uint64_t> SharedWorkdir::Put(
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
    if (!status.ok()) return status;
    return SizeOf(files);
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
  if (missing.empty()) return 0;
  absl::Status status = put(missing);
  if (!status.ok()) return status;
  put_.insert(keys.begin(), keys.end());
  return SizeOf(missing);
}

}  // namespace fleetplan
