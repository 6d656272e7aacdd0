#include "tools/agent/sockets.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fleetplan {
namespace {

std::string AddressText(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = "?";
  const void* raw = address->sa_family == AF_INET6
                        ? static_cast<const void*>(
                              &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr)
                        : &reinterpret_cast<const sockaddr_in*>(address)->sin_addr;
  inet_ntop(address->sa_family, raw, text, sizeof(text));
  return text;
}

// One connection attempt, bounded by `deadline`: the connected socket, or
// -errno.
int ConnectOnce(const addrinfo& address, absl::Time deadline) {
  Fd fd(socket(address.ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) return -errno;
  if (connect(fd.get(), address.ai_addr, address.ai_addrlen) == 0) return fd.release();
  if (errno != EINPROGRESS) return -errno;
  pollfd poll_fd{fd.get(), POLLOUT, 0};
  int ready = poll(&poll_fd, 1, RemainingMs(deadline));
  if (ready <= 0) return ready == 0 ? -ETIMEDOUT : -errno;
  int error = 0;
  socklen_t length = sizeof(error);
  getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length);
  return error == 0 ? fd.release() : -error;
}

}  // namespace

int RemainingMs(absl::Time deadline) {
  return static_cast<int>(
      std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now())));
}

int BindAnyAddress(int port) {
  int error = EAFNOSUPPORT;
  for (int family : {AF_INET6, AF_INET}) {
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      error = errno;
      continue;
    }
    int on = 1, off = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    sockaddr_storage address{};
    socklen_t length;
    if (family == AF_INET6) {
      setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
      auto* in6 = reinterpret_cast<sockaddr_in6*>(&address);
      in6->sin6_family = AF_INET6;
      in6->sin6_addr = in6addr_any;
      in6->sin6_port = htons(port);
      length = sizeof(*in6);
    } else {
      auto* in4 = reinterpret_cast<sockaddr_in*>(&address);
      in4->sin_family = AF_INET;
      in4->sin_addr.s_addr = htonl(INADDR_ANY);
      in4->sin_port = htons(port);
      length = sizeof(*in4);
    }
    if (bind(fd, reinterpret_cast<sockaddr*>(&address), length) == 0 &&
        listen(fd, 128) == 0) {
      return fd;
    }
    error = errno;
    close(fd);
    // Only a missing IPv6 stack is a reason to try IPv4.
    if (error != EAFNOSUPPORT && error != EADDRNOTAVAIL) break;
  }
  return -error;
}

absl::StatusOr<HostPort> ParseHostPort(absl::string_view target) {
  size_t colon = target.rfind(':');
  int port = 0;
  if (colon == absl::string_view::npos || colon == 0 ||
      !absl::SimpleAtoi(target.substr(colon + 1), &port) || port < 1 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected HOST:PORT or [IPv6]:PORT, got \"", target, "\""));
  }
  absl::string_view host = target.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return HostPort{std::string(host), absl::StrCat(port)};
}

absl::StatusOr<Connected> ConnectWithRetry(absl::string_view target, absl::Duration timeout) {
  absl::StatusOr<HostPort> parsed = ParseHostPort(target);
  if (!parsed.ok()) return parsed.status();
  const absl::Time start = absl::Now();
  absl::Time deadline = start + timeout;
  absl::Duration pause = absl::Milliseconds(10);
  std::string last_error;
  do {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int resolved = getaddrinfo(parsed->host.c_str(), parsed->port.c_str(), &hints, &found);
    if (resolved != 0) {
      last_error = absl::StrCat("cannot resolve ", parsed->host, ": ", gai_strerror(resolved));
    }
    for (addrinfo* address = found; address != nullptr; address = address->ai_next) {
      absl::Time attempt_end = std::min(deadline, absl::Now() + absl::Seconds(3));
      int fd = ConnectOnce(*address, attempt_end);
      std::string where = absl::StrCat(target, " (", AddressText(address->ai_addr), ")");
      if (fd >= 0) {
        freeaddrinfo(found);
        return Connected{Fd(fd), where};
      }
      last_error = absl::StrCat("cannot connect to ", where, ": ", std::strerror(-fd));
    }
    if (found != nullptr) freeaddrinfo(found);
    // Quick retries for the first second: the listener is usually moments
    // from ready (the chief's agent starts at the same time as this one,
    // and a doubling pause would often wake well after it listens).
    absl::SleepFor(std::min(pause, deadline - absl::Now()));
    if (absl::Now() - start > absl::Seconds(1)) pause = std::min(pause * 2, absl::Milliseconds(200));
  } while (absl::Now() < deadline);
  return absl::UnavailableError(absl::StrCat(
      last_error, " (kept trying for ", absl::FormatDuration(timeout), ")"));
}

}  // namespace fleetplan
