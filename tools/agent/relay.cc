#include "tools/agent/relay.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <utility>
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
#include "tools/agent/relay_stock.h"
#include "tools/agent/relay_wire.h"
#include "tools/agent/sockets.h"
#include "tools/agent/unproven_admission.h"
#include "tools/process/files.h"
#include "tools/protocol/relay_report.h"
#include "tools/secure/tls_channel.h"
#include "tools/sync/manifest.h"
#include "tools/sync/tree_check.h"
#include "tools/util/digest.h"
#include "tools/util/path_policy.h"

namespace fleetplan {
namespace {

constexpr size_t kChunk = 1 << 20;
// How long a server waits for more of a file its own source sends.
constexpr absl::Duration kStall = absl::Minutes(2);
// How long a connection may take to prove the job's key (how many may be
// proving it at once: unproven_admission.h): strangers cost the server a
// bounded number of threads and bytes, and none of the tree's.
constexpr absl::Duration kHandshakeTimeout = absl::Seconds(10);

// --- server ----------------------------------------------------------------

// Names this serving process in its magic line: a node whose parent's
// address leads back to itself (a loopback address in the spec) tells so
// at once rather than waiting on its own manifest.
std::string ServerIdentity() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return absl::StrCat(host, "-", getpid(), "-", absl::ToUnixNanos(absl::Now()));
}

// Serves one receiver: the magic at once, the manifest once known, then
// the files it asks for as the stock has them.
absl::Status ServeOne(TlsSocket& socket, RelayStock& stock, const std::string& identity,
                      absl::Duration manifest_wait) {
  absl::Status sent = socket.SendAll(absl::StrCat(kRelayMagic, " ", identity, "\n"));
  if (!sent.ok()) return sent;
  absl::StatusOr<std::string> text = stock.WaitForManifest(absl::Now() + manifest_wait);
  if (!text.ok()) return text.status();
  sent = socket.SendAll(absl::StrCat(text->size(), "\n", *text));
  if (!sent.ok()) return sent;
  size_t entries = stock.entries();
  absl::StatusOr<std::string> line = socket.ReceiveLine(16 * entries + 64);
  if (!line.ok()) return line.status();
  absl::StatusOr<std::vector<size_t>> wanted = ParseWantedEntries(*line, entries);
  if (!wanted.ok()) return wanted.status();
  for (size_t index : *wanted) {
    absl::Status file = stock.Send(
        [&socket](absl::string_view bytes) { return socket.SendAll(bytes); }, index, kStall);
    if (!file.ok()) return file;
  }
  return absl::OkStatus();
}

struct ServeLoop {
  std::string identity;
  std::shared_ptr<TlsEndpoint> endpoint;  // the server's side, with the job's key
  int listener = -1;
  int expect = 1;
  int stop_fd = -1;
  absl::Time deadline;
  // For a node that receives too: once its receive ended, accept for this
  // much longer (a child still starting), or not at all after a failure.
  absl::Duration linger = absl::InfiniteDuration();
};

// The connections a server has accepted, as its threads hold them: the
// loop may cut one off (shutdown) only while its thread still holds it.
struct Accepted {
  absl::Mutex mu;
  std::set<int> open ABSL_GUARDED_BY(mu);
  // With when each was accepted, oldest first.
  std::vector<std::pair<int, absl::Time>> unproven ABSL_GUARDED_BY(mu);
  int proven ABSL_GUARDED_BY(mu) = 0;
  size_t refused ABSL_GUARDED_BY(mu) = 0;

  int Proven() {
    absl::MutexLock lock(&mu);
    return proven;
  }
  // Cuts off every connection (stop), or only those still unproven.
  void CutOff(bool unproven_only) {
    absl::MutexLock lock(&mu);
    if (!unproven_only) {
      for (int fd : open) shutdown(fd, SHUT_RDWR);
      return;
    }
    for (const auto& [fd, since] : unproven) shutdown(fd, SHUT_RDWR);
  }
  // A new connection, to prove the job's key (unproven_admission.h): false
  // when it is refused (counted in `refused`, which `*refused_so_far` gets).
  bool Admit(int fd, absl::Time now, size_t* refused_so_far) {
    absl::MutexLock lock(&mu);
    std::optional<absl::Time> oldest;
    if (!unproven.empty()) oldest = unproven.front().second;
    switch (AdmitUnproven(unproven.size(), oldest, now)) {
      case Admission::kAdmit:
        break;
      case Admission::kAdmitCuttingOffOldest:
        shutdown(unproven.front().first, SHUT_RDWR);
        unproven.erase(unproven.begin());
        break;
      case Admission::kRefuse:
        *refused_so_far = ++refused;
        return false;
    }
    open.insert(fd);
    unproven.emplace_back(fd, now);
    return true;
  }
  // Its handshake ended. Refused: how many were so far.
  size_t Proved(int fd, bool ok) {
    absl::MutexLock lock(&mu);
    auto it = std::find_if(unproven.begin(), unproven.end(),
                           [fd](const auto& each) { return each.first == fd; });
    if (it != unproven.end()) unproven.erase(it);
    if (ok) {
      ++proven;
      return 0;
    }
    return ++refused;
  }
};

using Say = std::function<void(const std::string&)>;

// One receiver's thread: the handshake with the job's key, then its files.
void ServeAccepted(int socket, std::shared_ptr<TlsSocket> connection, Accepted& accepted,
                   RelayStock& stock, const std::string& identity, const Say& say) {
  absl::Status proven = connection->HandshakeBy(absl::Now() + kHandshakeTimeout);
  size_t refused = accepted.Proved(socket, proven.ok());
  if (!proven.ok() && RefusalWorthSaying(refused)) {
    say(absl::StrCat("relay: refused a connection (", refused, " so far): ", proven.message()));
  }
  if (proven.ok()) {
    absl::Status served = ServeOne(*connection, stock, identity, kStall);
    if (!served.ok()) say(absl::StrCat("relay: a receiver broke off: ", served.message()));
  }
  absl::MutexLock lock(&accepted.mu);
  accepted.open.erase(socket);
  connection.reset();  // closes the socket while no one may cut it off
}

// Waits for the next receiver's connection: its socket, or kNoneYet (call
// again: `stop` or the deadline may have ended serving), or kPollFailed.
constexpr int kNoneYet = -1;
constexpr int kPollFailed = -2;
int NextReceiver(const ServeLoop& loop, RelayStock& stock, absl::Time* deadline,
                 bool* lingering, bool* stop) {
  if (!*lingering && loop.linger != absl::InfiniteDuration()) {
    if (std::optional<bool> ended = stock.ended(); ended.has_value()) {
      *lingering = true;
      *deadline = std::min(*deadline, absl::Now() + (*ended ? loop.linger : absl::ZeroDuration()));
      return kNoneYet;
    }
  }
  pollfd fds[2] = {{loop.listener, POLLIN, 0}, {loop.stop_fd, POLLIN, 0}};
  // A short tick, to notice receivers proven meanwhile and the own
  // receive's end.
  int wait = std::min(RemainingMs(*deadline), 100);
  int ready = poll(fds, loop.stop_fd >= 0 ? 2 : 1, wait);
  if (ready < 0 && errno != EINTR) return kPollFailed;
  if (ready <= 0) return kNoneYet;
  if (loop.stop_fd >= 0 && fds[1].revents != 0) {
    char byte;
    if (read(loop.stop_fd, &byte, 1) <= 0) *stop = true;
    return kNoneYet;
  }
  return accept4(loop.listener, nullptr, nullptr, SOCK_CLOEXEC);
}

// Accepts receivers and serves each from a thread of its own until
// `expect` of them proved the job's key and were served, `stop_fd` ends,
// or the deadline; then waits for the threads. The number served.
size_t Serve(const ServeLoop& loop, RelayStock& stock, std::FILE* out) {
  std::vector<std::thread> senders;
  Accepted accepted;
  absl::Mutex out_mu;
  Say say = [&](const std::string& line) {
    absl::MutexLock lock(&out_mu);
    std::fprintf(out, "%s\n", line.c_str());
    std::fflush(out);
  };
  absl::Time deadline = loop.deadline;
  bool stop = false, lingering = false;
  while (!stop && accepted.Proven() < loop.expect && absl::Now() < deadline) {
    int socket = NextReceiver(loop, stock, &deadline, &lingering, &stop);
    if (socket == kPollFailed) break;
    if (socket < 0) continue;
    absl::StatusOr<std::unique_ptr<TlsSocket>> tls = TlsSocket::Make(loop.endpoint, socket);
    if (!tls.ok()) continue;  // closed with it
    SetSocketTimeouts(socket, kStall);
    size_t refused = 0;
    if (!accepted.Admit(socket, absl::Now(), &refused)) {
      if (RefusalWorthSaying(refused)) {
        say(absl::StrCat("relay: refused a connection (", refused,
                         " so far): too many connections that did not prove the job's key yet"));
      }
      continue;  // closed with `tls`
    }
    senders.emplace_back(ServeAccepted, socket, std::shared_ptr<TlsSocket>(*std::move(tls)),
                         std::ref(accepted), std::ref(stock), std::cref(loop.identity),
                         std::cref(say));
  }
  // Done accepting. Connections still proving nothing are cut off; told to
  // stop (apply saw every receiver end), so are senders still sending:
  // nobody is left to send to.
  accepted.CutOff(/*unproven_only=*/!stop);
  for (std::thread& sender : senders) sender.join();
  return accepted.Proven();
}

// --- receiver ----------------------------------------------------------------

// A file error: not the source's doing, so no other source is tried.
absl::Status FileError(absl::string_view what) {
  return absl::FailedPreconditionError(absl::StrCat(what, ": ", std::strerror(errno)));
}

absl::Status WriteAll(int fd, const char* data, size_t size, const std::string& path) {
  for (size_t written = 0; written < size;) {
    ssize_t n = write(fd, data + written, size - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return FileError(absl::StrCat("writing ", path));
    written += n;
  }
  return absl::OkStatus();
}

// Receives entry `index` into its place under `root`: a temporary file
// beside it (which the stock serves as it grows), its mode, then a rename,
// so a broken transfer leaves the old file.
absl::Status ReceiveFile(TlsSocket& socket, const std::string& root, const ManifestEntry& entry,
                         size_t index, RelayStock& stock, std::vector<char>& buffer) {
  std::string path = absl::StrCat(root, "/", entry.path);
  std::string temporary = absl::StrCat(path, ".fleetplan-part");
  if (absl::Status made = MakeDirs(Dirname(path)); !made.ok()) return made;
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return FileError(absl::StrCat("creating ", temporary));
  stock.Receiving(index, temporary);
  uint64_t left = entry.size;
  absl::Status status;
  Digester digest;
  while (left > 0 && status.ok()) {
    size_t chunk = std::min<uint64_t>(left, buffer.size());
    status = socket.ReceiveExactly(buffer.data(), chunk);
    if (status.ok()) status = WriteAll(fd, buffer.data(), chunk, temporary);
    if (status.ok()) {
      digest.AddBytes(buffer.data(), chunk);
      stock.Wrote(index, chunk);
    }
    left -= chunk;
  }
  // Nothing lands under its name before its bytes match the manifest that
  // apply's digest vouched for.
  if (status.ok() && digest.Hex() != entry.digest) {
    status = absl::DataLossError("its bytes do not match the manifest's digest");
  }
  if (status.ok() && fchmod(fd, entry.mode) != 0) status = FileError("setting the mode");
  close(fd);
  if (status.ok()) {
    status = stock.Place(index);
  } else {
    stock.Dropped(index);
  }
  if (!status.ok()) {
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

// The manifest after the magic line; Unavailable (not a relay, or this
// node's own server) for another first line.
absl::StatusOr<std::string> ReceiveManifestText(TlsSocket& socket,
                                                const std::string& own_identity,
                                                absl::Duration io_timeout) {
  // A relay server answers at once.
  SetSocketTimeouts(socket.fd(), absl::Seconds(10));
  absl::StatusOr<std::string> magic = socket.ReceiveLine(512);
  if (!magic.ok()) {
    return absl::UnavailableError(
        absl::StrCat("what answered is not a relay server (", magic.status().message(), ")"));
  }
  absl::StatusOr<std::string> identity = ParseRelayMagic(*magic);
  if (!identity.ok()) return identity.status();
  if (*identity == own_identity) {
    return absl::UnavailableError("that address leads back to this node itself");
  }
  // The manifest comes once the server has it (its own source answered).
  SetSocketTimeouts(socket.fd(), io_timeout);
  absl::StatusOr<std::string> header = socket.ReceiveLine(32);
  if (!header.ok()) return header.status();
  absl::StatusOr<size_t> size = ParseManifestSize(*header);
  if (!size.ok()) return size.status();
  std::string text(*size, '\0');
  if (absl::Status got = socket.ReceiveExactly(text.data(), *size); !got.ok()) return got;
  return text;
}

// One receive from one or more sources in turn.
class Receiver {
 public:
  Receiver(const RelayReceiveOptions& options, std::shared_ptr<TlsEndpoint> endpoint,
           RelayStock& stock, std::string identity)
      : options_(options),
        endpoint_(std::move(endpoint)),
        stock_(stock),
        identity_(std::move(identity)),
        buffer_(kChunk) {}

  // Fetches what is still missing from `source`. Unavailable: the source
  // could not be reached or broke off (try the next one).
  absl::Status From(const RelaySource& source, absl::Duration connect_timeout) {
    absl::StatusOr<Connected> connected = ConnectWithRetry(source.target, connect_timeout);
    if (!connected.ok()) {
      return absl::UnavailableError(
          absl::StrCat("cannot reach ", source.node, ": ", connected.status().message()));
    }
    int fd = connected->fd.release();
    // ConnectWithRetry leaves it non-blocking; the receiver reads in order.
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    absl::StatusOr<std::unique_ptr<TlsSocket>> socket = TlsSocket::Make(endpoint_, fd);
    if (!socket.ok()) return socket.status();
    // A source that cannot prove the job's key is no node of this job:
    // nothing it would send is read, and the next source is tried.
    if (absl::Status proven = (*socket)->HandshakeBy(absl::Now() + kHandshakeTimeout);
        !proven.ok()) {
      return absl::UnavailableError(absl::StrCat(source.node, " at ", connected->address, ": ",
                                                 proven.message()));
    }
    size_t before = files_.size();
    absl::Status got = FromSocket(**socket);
    if (got.ok() || files_.size() > before) used_.push_back(source.node);
    if (got.ok()) return got;
    return absl::Status(got.code(),
                        absl::StrCat(source.node, " at ", connected->address, ": ", got.message()));
  }

  // Removes what the manifest no longer lists, records it, checks the tree.
  absl::Status Finish() {
    for (const std::string& path : diff_.to_remove) {
      if (!CheckStaysUnderRoot("the workdir", path).ok()) continue;
      std::string target = absl::StrCat(options_.root, "/", path);
      if (unlink(target.c_str()) != 0 && errno != ENOENT) {
        return FileError(absl::StrCat("removing ", target));
      }
      ++removed_;
    }
    // A manifest lost with the node is one apply sends in full again.
    if (absl::Status written =
            WriteFileAtomic(options_.manifest_path, text_, 0600, Durability::kProcess);
        !written.ok()) {
      return written;
    }
    std::vector<std::string> mismatches =
        CheckTree(options_.root, manifest_, CheckRecordPath(options_.manifest_path));
    if (mismatches.empty()) return absl::OkStatus();
    WriteFileAtomic(options_.manifest_path, "", 0600).IgnoreError();
    constexpr size_t kNamed = 10;
    std::vector<std::string> named(mismatches.begin(),
                                   mismatches.begin() + std::min(kNamed, mismatches.size()));
    return absl::DataLossError(absl::StrCat(
        mismatches.size(), " files differ from the manifest after the relay: ",
        absl::StrJoin(named, ", "), mismatches.size() > kNamed ? ", ..." : ""));
  }

  RelayReceived Received() const {
    return {files_.size(), bytes_, used_, static_cast<uint64_t>(removed_)};
  }

 private:
  absl::Status FromSocket(TlsSocket& socket) {
    absl::StatusOr<std::string> text =
        ReceiveManifestText(socket, identity_, options_.io_timeout);
    if (!text.ok()) return text.status();
    if (!options_.expect_digest.empty() && DigestHex(*text) != options_.expect_digest) {
      return absl::FailedPreconditionError(
          "its manifest is not the one apply synced (the chief's sync did not complete)");
    }
    if (text_.empty()) {
      if (absl::Status learned = Learn(*text); !learned.ok()) return learned;
    } else if (*text != text_) {
      return absl::FailedPreconditionError("its manifest is not the one the first source sent");
    }
    std::vector<std::string> asked;
    for (size_t index : wanted_) {
      if (files_.count(index) == 0) asked.push_back(absl::StrCat(index));
    }
    absl::Status sent = socket.SendAll(absl::StrCat(absl::StrJoin(asked, " "), "\n"));
    if (!sent.ok()) return sent;
    for (size_t index : wanted_) {
      if (files_.count(index) > 0) continue;
      const ManifestEntry& entry = manifest_.entries[index];
      absl::Status file = ReceiveFile(socket, options_.root, entry, index, stock_, buffer_);
      if (!file.ok()) return file;
      files_.insert(index);
      bytes_ += entry.size;
    }
    return absl::OkStatus();
  }

  // The first manifest: what this node lacks, and what it holds to serve.
  absl::Status Learn(const std::string& text) {
    absl::StatusOr<Manifest> manifest = ParseManifest(text);
    if (!manifest.ok()) return manifest.status();
    for (const ManifestEntry& entry : manifest->entries) {
      if (absl::Status safe = CheckStaysUnderRoot("the workdir", entry.path); !safe.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("unsafe path in the manifest: ", safe.message()));
      }
    }
    Manifest recorded =
        options_.ignore_recorded ? Manifest() : RecordedManifest(options_.manifest_path);
    diff_ = DiffManifests(recorded, *manifest);
    std::map<std::string, size_t> index_of;
    for (size_t i = 0; i < manifest->entries.size(); ++i) {
      index_of[manifest->entries[i].path] = i;
    }
    std::vector<bool> held(manifest->entries.size(), true);
    for (const ManifestEntry& entry : diff_.to_send) {
      wanted_.push_back(index_of[entry.path]);
      held[wanted_.back()] = false;
    }
    std::sort(wanted_.begin(), wanted_.end());
    text_ = text;
    manifest_ = *manifest;
    stock_.SetManifest(options_.root, text, *std::move(manifest), std::move(held));
    return absl::OkStatus();
  }

  const RelayReceiveOptions& options_;
  std::shared_ptr<TlsEndpoint> endpoint_;  // the client's side, with the job's key
  RelayStock& stock_;
  const std::string identity_;  // of this node's own server
  std::vector<char> buffer_;
  std::string text_;
  Manifest manifest_;
  ManifestDiff diff_;
  std::vector<size_t> wanted_;   // manifest order: a parent receives in it too
  std::set<size_t> files_;       // received, in place
  uint64_t bytes_ = 0;
  int removed_ = 0;
  std::vector<std::string> used_;  // the sources files came from
};

// Serves this node's children on a thread while it receives.
class ChildServer {
 public:
  ChildServer(const RelayReceiveOptions& options, std::shared_ptr<TlsEndpoint> endpoint,
              RelayStock& stock, const std::string& identity, std::FILE* out) {
    if (options.serve_port <= 0 || options.serve_expect <= 0) return;
    int listener = BindAnyAddress(options.serve_port);
    if (listener < 0) {
      // The children find nothing there and turn to the chief.
      std::fprintf(out, "relay: cannot listen on port %d for this node's children: %s\n",
                   options.serve_port, std::strerror(-listener));
      return;
    }
    listening_ = Fd(listener);
    ServeLoop loop;
    loop.identity = identity;
    loop.endpoint = std::move(endpoint);
    loop.listener = listener;
    loop.expect = options.serve_expect;
    loop.deadline = absl::Now() + absl::Minutes(10);
    loop.linger = options.linger;
    thread_ = std::thread([loop, &stock, out] { Serve(loop, stock, out); });
  }
  ~ChildServer() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  Fd listening_;
  std::thread thread_;
};

}  // namespace

int RunRelayServe(const RelayServeOptions& options, std::FILE* out) {
  absl::StatusOr<std::shared_ptr<TlsEndpoint>> endpoint =
      options.key.has_value()
          ? TlsEndpoint::Make(TlsEndpoint::Side::kServer, *options.key, kRelayPurpose)
          : absl::FailedPreconditionError("no job key: the relay serves only the job's nodes");
  if (!endpoint.ok()) {
    std::fprintf(out, "relay: %s\n", std::string(endpoint.status().message()).c_str());
    return 1;
  }
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
  std::fprintf(out, "%s\n", RelayServingLine({options.port}).c_str());
  std::fflush(out);
  signal(SIGPIPE, SIG_IGN);
  // Every entry is in place: the chief's sync completed and was recorded.
  RelayStock stock;
  stock.SetManifest(options.root, *text, *std::move(manifest), {});
  ServeLoop loop;
  loop.identity = ServerIdentity();
  loop.endpoint = *endpoint;
  loop.listener = listener;
  loop.expect = options.expect;
  loop.stop_fd = options.stop_fd;
  loop.deadline = absl::Now() + options.timeout;
  size_t served = Serve(loop, stock, out);
  std::fprintf(out, "relay: served %zu receivers\n", served);
  return 0;
}

int RunRelayReceive(const RelayReceiveOptions& options, std::FILE* out) {
  signal(SIGPIPE, SIG_IGN);
  absl::StatusOr<std::shared_ptr<TlsEndpoint>> client, server;
  if (options.key.has_value()) {
    client = TlsEndpoint::Make(TlsEndpoint::Side::kClient, *options.key, kRelayPurpose);
    server = TlsEndpoint::Make(TlsEndpoint::Side::kServer, *options.key, kRelayPurpose);
  } else {
    client = server = absl::FailedPreconditionError("no job key: the relay talks to the job's nodes only");
  }
  if (!client.ok() || !server.ok()) {
    std::fprintf(out, "relay: %s\n",
                 std::string((client.ok() ? server : client).status().message()).c_str());
    return 1;
  }
  RelayStock stock;
  std::string identity = ServerIdentity();
  Receiver receiver(options, *client, stock, identity);
  absl::Status status = absl::UnavailableError("no relay source given");
  {
    ChildServer children(options, *server, stock, identity, out);
    for (size_t i = 0; i < options.sources.size(); ++i) {
      bool last = i + 1 == options.sources.size();
      status = receiver.From(options.sources[i], last ? options.connect_timeout
                                                      : options.parent_connect_timeout);
      if (!absl::IsUnavailable(status)) break;
      if (!last) {
        std::fprintf(out, "%s\n",
                     RelayFallbackLine({options.sources[i].node, std::string(status.message())})
                         .c_str());
        std::fflush(out);
      }
    }
    if (status.ok()) status = receiver.Finish();
    stock.Ended(status.ok());
  }
  if (absl::IsUnavailable(status)) {
    std::fprintf(out, "relay: %s\n", std::string(status.message()).c_str());
    return kExitRelayUnreachable;
  }
  if (!status.ok()) {
    // Bytes that did not match: what this node records can no longer be
    // trusted, so the next sync sends everything again.
    if (absl::IsDataLoss(status)) {
      WriteFileAtomic(options.manifest_path, "", 0600).IgnoreError();
    }
    std::fprintf(out, "relay: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  std::fprintf(out, "%s\n", RelayReceivedLine(receiver.Received()).c_str());
  return 0;
}

}  // namespace fleetplan
