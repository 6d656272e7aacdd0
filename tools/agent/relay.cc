#include "tools/agent/relay.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "tools/agent/sockets.h"
#include "tools/process/files.h"
#include "tools/sync/manifest.h"
#include "tools/sync/tree_check.h"
#include "tools/util/digest.h"

namespace fleetplan {
namespace {

constexpr absl::string_view kMagic = "FPRELAY1";
constexpr size_t kChunk = 1 << 20;

void SetSocketTimeouts(int fd, absl::Duration timeout) {
  timeval tv{};
  tv.tv_sec = absl::ToInt64Seconds(timeout);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

absl::Status ErrnoError(absl::string_view what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

absl::Status SendAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t sent = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return ErrnoError("sending");
    data.remove_prefix(sent);
  }
  return absl::OkStatus();
}

// Reads exactly `size` bytes (fewer only at an error or end of stream).
absl::Status ReceiveExactly(int fd, char* buffer, size_t size) {
  while (size > 0) {
    ssize_t got = recv(fd, buffer, size, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got == 0) return absl::UnavailableError("the connection closed early");
    if (got < 0) return ErrnoError("receiving");
    buffer += got;
    size -= got;
  }
  return absl::OkStatus();
}

// One '\n'-terminated line, byte by byte (lines are short and few), at
// most `limit` bytes long.
absl::StatusOr<std::string> ReceiveLine(int fd, size_t limit) {
  std::string line;
  char c;
  while (true) {
    if (absl::Status got = ReceiveExactly(fd, &c, 1); !got.ok()) return got;
    if (c == '\n') return line;
    line.push_back(c);
    if (line.size() > limit) return absl::InvalidArgumentError("line too long");
  }
}

// A path from the manifest that stays under the root.
bool SafeRelativePath(absl::string_view path) {
  if (path.empty() || path.front() == '/') return false;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

// --- server ----------------------------------------------------------------

absl::Status SendFileContent(int socket, const std::string& path, uint64_t size) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(absl::StrCat("opening ", path));
  struct stat info {};
  if (fstat(fd, &info) != 0 || static_cast<uint64_t>(info.st_size) != size) {
    close(fd);
    return absl::DataLossError(absl::StrCat(path, " is not the size its manifest lists"));
  }
  off_t offset = 0;
  while (static_cast<uint64_t>(offset) < size) {
    ssize_t sent = sendfile(socket, fd, &offset, std::min<uint64_t>(size - offset, 1 << 30));
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) {
      absl::Status error = ErrnoError(absl::StrCat("sending ", path));
      close(fd);
      return error;
    }
  }
  close(fd);
  return absl::OkStatus();
}

// Serves one receiver: the manifest, then the files it asks for.
absl::Status ServeOne(int socket, const RelayServeOptions& options, const std::string& text,
                      const Manifest& manifest) {
  absl::Status sent = SendAll(socket, absl::StrCat(kMagic, " ", text.size(), "\n", text));
  if (!sent.ok()) return sent;
  absl::StatusOr<std::string> wanted = ReceiveLine(socket, 16 * manifest.entries.size() + 64);
  if (!wanted.ok()) return wanted.status();
  for (absl::string_view word : absl::StrSplit(*wanted, ' ', absl::SkipEmpty())) {
    size_t index = 0;
    if (!absl::SimpleAtoi(word, &index) || index >= manifest.entries.size()) {
      return absl::InvalidArgumentError(absl::StrCat("asked for entry '", word, "'"));
    }
    const ManifestEntry& entry = manifest.entries[index];
    absl::Status file = SendFileContent(socket, absl::StrCat(options.root, "/", entry.path),
                                        entry.size);
    if (!file.ok()) return file;
  }
  return absl::OkStatus();
}

// --- receiver ----------------------------------------------------------------

// Receives `entry` into its place under `root`: a temporary file beside it,
// its mode, then a rename, so a broken transfer leaves the old file.
absl::Status ReceiveFile(int socket, const std::string& root, const ManifestEntry& entry,
                         std::vector<char>& buffer) {
  std::string path = absl::StrCat(root, "/", entry.path);
  std::string temporary = absl::StrCat(path, ".fleetplan-part");
  size_t slash = path.rfind('/');
  if (absl::Status made = MakeDirs(path.substr(0, slash)); !made.ok()) return made;
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoError(absl::StrCat("creating ", temporary));
  uint64_t left = entry.size;
  absl::Status status;
  while (left > 0 && status.ok()) {
    size_t chunk = std::min<uint64_t>(left, buffer.size());
    status = ReceiveExactly(socket, buffer.data(), chunk);
    if (!status.ok()) break;
    for (size_t written = 0; written < chunk;) {
      ssize_t n = write(fd, buffer.data() + written, chunk - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        status = ErrnoError(absl::StrCat("writing ", temporary));
        break;
      }
      written += n;
    }
    left -= chunk;
  }
  if (status.ok() && fchmod(fd, entry.mode) != 0) status = ErrnoError("setting the mode");
  close(fd);
  if (status.ok() && rename(temporary.c_str(), path.c_str()) != 0) {
    status = ErrnoError(absl::StrCat("renaming ", temporary));
  }
  if (!status.ok()) {
    unlink(temporary.c_str());
    return absl::Status(status.code(), absl::StrCat(entry.path, ": ", status.message()));
  }
  return absl::OkStatus();
}

Manifest RecordedManifest(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return Manifest();
  absl::StatusOr<Manifest> manifest = ParseManifest(*text);
  return manifest.ok() ? *manifest : Manifest();
}

struct Received {
  int files = 0;
  uint64_t bytes = 0;
  int removed = 0;
};

// The manifest header; Unavailable (not a relay) for anything else.
absl::StatusOr<std::string> ReceiveManifestText(int socket) {
  absl::StatusOr<std::string> header = ReceiveLine(socket, 64);
  std::vector<absl::string_view> words;
  if (header.ok()) words = absl::StrSplit(*header, ' ');
  size_t size = 0;
  if (!header.ok() || words.size() != 2 || words[0] != kMagic ||
      !absl::SimpleAtoi(words[1], &size)) {
    return absl::UnavailableError(absl::StrCat(
        "what answered is not a relay server",
        header.ok() ? absl::StrCat(" (it said \"", absl::CHexEscape(*header), "\")")
                    : absl::StrCat(" (", header.status().message(), ")")));
  }
  std::string text(size, '\0');
  if (absl::Status got = ReceiveExactly(socket, text.data(), size); !got.ok()) return got;
  return text;
}

absl::StatusOr<Received> Receive(int socket, const RelayReceiveOptions& options,
                                 const std::string& text) {
  if (!options.expect_digest.empty() && DigestHex(text) != options.expect_digest) {
    return absl::FailedPreconditionError(
        "the relay's manifest is not the one apply synced (the chief's sync did not complete)");
  }
  absl::StatusOr<Manifest> manifest = ParseManifest(text);
  if (!manifest.ok()) return manifest.status();
  for (const ManifestEntry& entry : manifest->entries) {
    if (!SafeRelativePath(entry.path)) {
      return absl::InvalidArgumentError(absl::StrCat("unsafe path in the manifest: ", entry.path));
    }
  }
  Manifest recorded = options.ignore_recorded ? Manifest() : RecordedManifest(options.manifest_path);
  ManifestDiff diff = DiffManifests(recorded, *manifest);
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < manifest->entries.size(); ++i) index_of[manifest->entries[i].path] = i;
  std::vector<std::string> wanted;
  for (const ManifestEntry& entry : diff.to_send) wanted.push_back(absl::StrCat(index_of[entry.path]));
  absl::Status asked = SendAll(socket, absl::StrCat(absl::StrJoin(wanted, " "), "\n"));
  if (!asked.ok()) return asked;
  Received received;
  std::vector<char> buffer(kChunk);
  for (const ManifestEntry& entry : diff.to_send) {
    absl::Status file = ReceiveFile(socket, options.root, entry, buffer);
    if (!file.ok()) return file;
    ++received.files;
    received.bytes += entry.size;
  }
  for (const std::string& path : diff.to_remove) {
    if (!SafeRelativePath(path)) continue;
    std::string target = absl::StrCat(options.root, "/", path);
    if (unlink(target.c_str()) != 0 && errno != ENOENT) {
      return ErrnoError(absl::StrCat("removing ", target));
    }
    ++received.removed;
  }
  if (absl::Status written = WriteFileAtomic(options.manifest_path, text, 0644); !written.ok()) {
    return written;
  }
  std::vector<std::string> mismatches =
      CheckTree(options.root, *manifest, CheckRecordPath(options.manifest_path));
  if (!mismatches.empty()) {
    WriteFileAtomic(options.manifest_path, "", 0644).IgnoreError();
    constexpr size_t kNamed = 10;
    std::vector<std::string> named(mismatches.begin(),
                                   mismatches.begin() + std::min(kNamed, mismatches.size()));
    return absl::DataLossError(absl::StrCat(
        mismatches.size(), " files differ from the manifest after the relay: ",
        absl::StrJoin(named, ", "), mismatches.size() > kNamed ? ", ..." : ""));
  }
  return received;
}

}  // namespace

int RunRelayServe(const RelayServeOptions& options, std::FILE* out) {
  absl::StatusOr<std::string> text = ReadFileToString(options.manifest_path);
  absl::StatusOr<Manifest> manifest = text.ok() ? ParseManifest(*text) : text.status();
  if (!manifest.ok()) {
    std::fprintf(out, "relay: cannot serve %s: %s\n", options.root.c_str(),
                 std::string(manifest.status().message()).c_str());
    return 1;
  }
  int listener = BindAnyAddress(options.port);
  if (listener < 0) {
    std::fprintf(out, "relay: cannot listen on port %d: %s\n", options.port,
                 std::strerror(-listener));
    return 1;
  }
  Fd listening(listener);
  std::fprintf(out, "relay: serving %s on port %d\n", options.root.c_str(), options.port);
  std::fflush(out);
  signal(SIGPIPE, SIG_IGN);
  // A thread per receiver: each sends from the page cache at its own pace.
  std::vector<int> sockets;
  std::vector<std::thread> senders;
  absl::Mutex out_mu;
  absl::Time deadline = absl::Now() + options.timeout;
  bool stop = false;
  while (!stop && static_cast<int>(senders.size()) < options.expect &&
         absl::Now() < deadline) {
    pollfd fds[2] = {{listening.get(), POLLIN, 0}, {options.stop_fd, POLLIN, 0}};
    int ready = poll(fds, options.stop_fd >= 0 ? 2 : 1, RemainingMs(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    if (options.stop_fd >= 0 && fds[1].revents != 0) {
      char byte;
      if (read(options.stop_fd, &byte, 1) <= 0) stop = true;
      continue;
    }
    int socket = accept4(listening.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (socket < 0) continue;
    SetSocketTimeouts(socket, absl::Minutes(2));
    sockets.push_back(socket);
    senders.emplace_back([&, socket] {
      absl::Status served = ServeOne(socket, options, *text, *manifest);
      if (!served.ok()) {
        absl::MutexLock lock(&out_mu);
        std::fprintf(out, "relay: a receiver broke off: %s\n",
                     std::string(served.message()).c_str());
      }
    });
  }
  // Done accepting. Told to stop (apply saw every receiver end): a sender
  // still sending has nobody left to send to.
  if (stop) {
    for (int socket : sockets) shutdown(socket, SHUT_RDWR);
  }
  for (std::thread& sender : senders) sender.join();
  for (int socket : sockets) close(socket);
  std::fprintf(out, "relay: served %zu receivers\n", senders.size());
  return 0;
}

int RunRelayReceive(const RelayReceiveOptions& options, std::FILE* out) {
  absl::StatusOr<Connected> connected = ConnectWithRetry(options.from, options.connect_timeout);
  if (!connected.ok()) {
    std::fprintf(out, "relay: cannot reach %s: %s\n", options.from_node.c_str(),
                 std::string(connected.status().message()).c_str());
    return kExitRelayUnreachable;
  }
  int socket = connected->fd.get();
  // ConnectWithRetry leaves it non-blocking; the receiver reads in order.
  fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) & ~O_NONBLOCK);
  // A relay server answers at once; something else on the port may not.
  SetSocketTimeouts(socket, absl::Seconds(10));
  absl::StatusOr<std::string> text = ReceiveManifestText(socket);
  SetSocketTimeouts(socket, options.io_timeout);
  if (absl::IsUnavailable(text.status())) {
    std::fprintf(out, "relay: %s at %s: %s\n", options.from_node.c_str(),
                 connected->address.c_str(), std::string(text.status().message()).c_str());
    return kExitRelayUnreachable;
  }
  absl::StatusOr<Received> received =
      text.ok() ? Receive(socket, options, *text) : text.status();
  if (!received.ok()) {
    std::fprintf(out, "relay from %s (%s): %s\n", options.from_node.c_str(),
                 connected->address.c_str(), std::string(received.status().message()).c_str());
    return 1;
  }
  std::fprintf(out, "received %d files (%llu bytes) from %s, removed %d\n", received->files,
               static_cast<unsigned long long>(received->bytes), options.from_node.c_str(),
               received->removed);
  return 0;
}

}  // namespace fleetplan
