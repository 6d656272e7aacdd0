#include "tools/agent/relay_stock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/agent/relay_wire.h"
#include "tools/agent/sockets.h"

namespace fleetplan {
namespace {

// What one read of a file hands to the connection (TLS records are 16 KiB;
// a larger read saves system calls).
constexpr size_t kSendChunk = 256 << 10;

}  // namespace

void RelayStock::SetManifest(const std::string& root, std::string text, Manifest manifest,
                             std::vector<bool> held) {
  absl::MutexLock lock(&mu_);
  root_ = root;
  entries_.assign(manifest.entries.size(), Entry());
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (!held.empty() && !held[i]) continue;
    entries_[i].path = absl::StrCat(root, "/", manifest.entries[i].path);
    entries_[i].available = manifest.entries[i].size;
    entries_[i].complete = true;
  }
  text_ = std::move(text);
  manifest_ = std::move(manifest);
  changed_.SignalAll();
}

void RelayStock::Receiving(size_t index, std::string temporary) {
  absl::MutexLock lock(&mu_);
  Entry& entry = entries_[index];
  entry.path = std::move(temporary);
  entry.available = 0;
  entry.complete = false;
  ++entry.generation;
  changed_.SignalAll();
}

void RelayStock::Wrote(size_t index, uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  entries_[index].available += bytes;
  changed_.SignalAll();
}

absl::Status RelayStock::Place(size_t index) {
  absl::MutexLock lock(&mu_);
  Entry& entry = entries_[index];
  // The final name now; an open temporary reads on (rename keeps it).
  std::string path = absl::StrCat(root_, "/", manifest_.entries[index].path);
  if (rename(entry.path.c_str(), path.c_str()) != 0) {
    absl::Status error = absl::FailedPreconditionError(
        absl::StrCat("renaming ", entry.path, ": ", std::strerror(errno)));
    unlink(entry.path.c_str());
    entry = Entry{"", 0, false, entry.generation + 1};
    changed_.SignalAll();
    return error;
  }
  entry.path = std::move(path);
  entry.available = manifest_.entries[index].size;
  entry.complete = true;
  ++entry.generation;
  changed_.SignalAll();
  return absl::OkStatus();
}

void RelayStock::Dropped(size_t index) {
  absl::MutexLock lock(&mu_);
  Entry& entry = entries_[index];
  if (!entry.path.empty() && !entry.complete) unlink(entry.path.c_str());
  entry = Entry{"", 0, false, entry.generation + 1};
  changed_.SignalAll();
}

void RelayStock::Ended(bool ok) {
  absl::MutexLock lock(&mu_);
  ended_ = ok;
  changed_.SignalAll();
}

absl::StatusOr<std::string> RelayStock::WaitForManifest(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  while (!text_.has_value() && !ended_.has_value()) {
    if (changed_.WaitWithDeadline(&mu_, deadline)) break;
  }
  if (text_.has_value()) return *text_;
  return absl::UnavailableError(ended_.has_value()
                                    ? "this node's own receive failed"
                                    : "this node did not get its manifest in time");
}

size_t RelayStock::entries() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

std::optional<bool> RelayStock::ended() const {
  absl::MutexLock lock(&mu_);
  return ended_;
}

bool RelayStock::AwaitProgress(size_t index, int generation, uint64_t offset,
                               absl::Duration stall) {
  absl::Time deadline = absl::Now() + stall;
  auto moved = [&] {
    const Entry& entry = entries_[index];
    return (ended_.has_value() && !*ended_) ||
           (!entry.path.empty() && (entry.generation != generation || entry.available > offset));
  };
  while (!moved()) {
    if (changed_.WaitWithDeadline(&mu_, deadline)) return moved();
  }
  return true;
}

absl::Status RelayStock::Send(const std::function<absl::Status(absl::string_view)>& send,
                              size_t index, absl::Duration stall) {
  // Read and handed to `send` (encrypted there) a chunk at a time.
  std::string buffer(kSendChunk, '\0');
  Fd file;
  int generation = -1;
  uint64_t offset = 0, size = 0;
  std::string path;
  while (true) {
    uint64_t available = 0;
    {
      absl::MutexLock lock(&mu_);
      const ManifestEntry& listed = manifest_.entries[index];
      size = listed.size;
      if (offset >= size) return absl::OkStatus();
      if (!AwaitProgress(index, generation, offset, stall)) {
        return absl::UnavailableError(absl::StrCat(
            "no progress on ", listed.path, " in ", absl::FormatDuration(stall)));
      }
      const Entry& entry = entries_[index];
      if (ended_.has_value() && !*ended_) {
        return absl::UnavailableError("this node's own receive failed");
      }
      if (entry.generation != generation) {
        // Opened under the lock: the receiver renames under it too.
        file = Fd(open(entry.path.c_str(), O_RDONLY | O_CLOEXEC));
        if (file.get() < 0) return SocketError(absl::StrCat("opening ", entry.path));
        struct stat info {};
        if (entry.complete &&
            (fstat(file.get(), &info) != 0 || static_cast<uint64_t>(info.st_size) != size)) {
          return absl::DataLossError(
              absl::StrCat(entry.path, " is not the size its manifest lists"));
        }
        generation = entry.generation;
        path = entry.path;
      }
      available = entry.available;
    }
    while (offset < available) {
      ssize_t got = pread(file.get(), buffer.data(),
                          std::min<uint64_t>(available - offset, buffer.size()),
                          static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        return absl::FailedPreconditionError(
            absl::StrCat("reading ", path, ": ", got < 0 ? std::strerror(errno) : "it shrank"));
      }
      if (absl::Status sent = send(absl::string_view(buffer.data(), got)); !sent.ok()) {
        return absl::Status(sent.code(), absl::StrCat("sending ", path, ": ", sent.message()));
      }
      offset += got;
    }
  }
}

}  // namespace fleetplan
