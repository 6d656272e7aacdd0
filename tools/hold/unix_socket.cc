#include "tools/hold/unix_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fleetplan {
namespace {

absl::StatusOr<sockaddr_un> Address(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("socket path too long: ", path));
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return address;
}

absl::Status Errno(absl::string_view doing, const std::string& path) {
  return absl::InternalError(absl::StrCat(doing, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<int> ListenUnix(const std::string& path) {
  absl::StatusOr<sockaddr_un> address = Address(path);
  if (!address.ok()) return address.status();
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket for", path);
  // Nobody else may connect even for the moment before chmod (the folder
  // is 0700 too).
  mode_t old_mask = umask(0177);
  int bound = bind(fd, reinterpret_cast<const sockaddr*>(&*address), sizeof(*address));
  int bind_errno = errno;
  umask(old_mask);
  if (bound != 0) {
    close(fd);
    errno = bind_errno;
    if (bind_errno == EADDRINUSE) return absl::AlreadyExistsError(absl::StrCat(path, " exists"));
    return Errno("bind", path);
  }
  if (chmod(path.c_str(), 0600) != 0 || listen(fd, 64) != 0) {
    absl::Status failed = Errno("listen on", path);
    close(fd);
    return failed;
  }
  return fd;
}

absl::StatusOr<int> ConnectUnix(const std::string& path) {
  absl::StatusOr<sockaddr_un> address = Address(path);
  if (!address.ok()) return address.status();
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket for", path);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&*address), sizeof(*address)) != 0) {
    int failed = errno;
    close(fd);
    if (failed == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such socket"));
    if (failed == ECONNREFUSED) {
      return absl::UnavailableError(absl::StrCat(path, ": nothing listens"));
    }
    errno = failed;
    return Errno("connect to", path);
  }
  return fd;
}

absl::Status CheckPeerUid(int fd, uid_t uid) {
  ucred peer{};
  socklen_t size = sizeof(peer);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0) {
    return absl::PermissionDeniedError(absl::StrCat("cannot tell who connected: ",
                                                    std::strerror(errno)));
  }
  if (peer.uid != uid) {
    return absl::PermissionDeniedError(
        absl::StrCat("a process of uid ", peer.uid, " (pid ", peer.pid, ") connected; only uid ",
                     uid, " may"));
  }
  return absl::OkStatus();
}

SocketStream::~SocketStream() { close(fd_); }

absl::Status SocketStream::Write(absl::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::UnavailableError(absl::StrCat("the holder's socket: ", std::strerror(errno)));
    }
    bytes.remove_prefix(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> SocketStream::Read(absl::Duration timeout) {
  pollfd ready{fd_, POLLIN, 0};
  int waited;
  int ms = timeout == absl::InfiniteDuration() ? -1
                                               : static_cast<int>(absl::ToInt64Milliseconds(
                                                     std::max(timeout, absl::ZeroDuration())));
  do {
    waited = poll(&ready, 1, ms);
  } while (waited < 0 && errno == EINTR);
  if (waited < 0) {
    return absl::UnavailableError(absl::StrCat("the holder's socket: ", std::strerror(errno)));
  }
  if (waited == 0) return std::string();
  std::string out(64 * 1024, '\0');
  ssize_t n;
  do {
    n = read(fd_, out.data(), out.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    return absl::UnavailableError(absl::StrCat("the holder's socket: ", std::strerror(errno)));
  }
  if (n == 0) return absl::OutOfRangeError("the other end closed the socket");
  out.resize(n);
  return out;
}

}  // namespace fleetplan
