#include "tools/agent/probe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "tools/protocol/check_line.h"

namespace fleetplan {
namespace {

// How long a listener told to stop still accepts, for a connection already
// on its way.
constexpr absl::Duration kListenAfterStop = absl::Seconds(3);

// A file descriptor closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(Fd&& other) : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) {
    std::swap(fd_, other.fd_);
    return *this;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

int RemainingMs(absl::Time deadline) {
  return static_cast<int>(
      std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now())));
}

// A socket bound to `port` on every address: IPv6 with IPv4 mapped in,
// else IPv4 alone where IPv6 is off. Returns -errno on failure.
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

std::string BindFailure(int port, int error) {
  if (error == EADDRINUSE) {
    return absl::StrCat(
        "port ", port, ": in use on this node (bind: ", std::strerror(error),
        "); expected it free for the rendezvous (MASTER_PORT); fix: stop the process "
        "that listens on it (ss -ltnp 'sport = :", port,
        "' names it), or choose another [network] master_port");
  }
  return absl::StrCat("port ", port, ": cannot be bound (bind: ", std::strerror(error),
                      "); expected the rendezvous to be able to listen on it; fix: "
                      "choose another [network] master_port (above 1023)");
}

// Waits for the client on `fd` to close first, so that TIME_WAIT stays on
// its side.
void CloseAfterPeer(int fd, absl::Duration wait) {
  pollfd poll_fd{fd, POLLIN, 0};
  char buffer[256];
  absl::Time deadline = absl::Now() + wait;
  while (poll(&poll_fd, 1, RemainingMs(deadline)) > 0 &&
         read(fd, buffer, sizeof(buffer)) > 0) {
  }
  close(fd);
}

struct Target {
  std::string host;
  std::string port;
};

absl::StatusOr<Target> ParseTarget(absl::string_view target) {
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
  return Target{std::string(host), absl::StrCat(port)};
}

std::string AddressText(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = "?";
  const void* raw = address->sa_family == AF_INET6
                        ? static_cast<const void*>(
                              &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr)
                        : &reinterpret_cast<const sockaddr_in*>(address)->sin_addr;
  inet_ntop(address->sa_family, raw, text, sizeof(text));
  return text;
}

// One connection attempt, bounded by `deadline`: 0, or the errno.
int ConnectOnce(const addrinfo& address, absl::Time deadline) {
  Fd fd(socket(address.ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) return errno;
  if (connect(fd.get(), address.ai_addr, address.ai_addrlen) == 0) return 0;
  if (errno != EINPROGRESS) return errno;
  pollfd poll_fd{fd.get(), POLLOUT, 0};
  int ready = poll(&poll_fd, 1, RemainingMs(deadline));
  if (ready <= 0) return ready == 0 ? ETIMEDOUT : errno;
  int error = 0;
  socklen_t length = sizeof(error);
  getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length);
  return error;
}

}  // namespace

int RunListenProbe(const ListenProbeOptions& options, std::FILE* out) {
  int bound = BindAnyAddress(options.port);
  if (bound < 0) {
    std::fprintf(out, "%s\n",
                 FormatCheckLine({std::string(kCheckPort), CheckStatus::kFail,
                                  BindFailure(options.port, -bound)})
                     .c_str());
    std::fflush(out);
    return 1;
  }
  Fd listener(bound);
  std::fprintf(out, "%s\n%s %s %d\n",
               FormatCheckLine({std::string(kCheckPort), CheckStatus::kOk,
                                absl::StrCat("port ", options.port,
                                             ": free; listening until the ", options.expect,
                                             " nodes have connected")})
                   .c_str(),
               std::string(kFactLinePrefix).c_str(), std::string(kFactListening).c_str(),
               options.port);
  std::fflush(out);

  absl::Time deadline = absl::Now() + options.timeout;
  int accepted = 0;
  bool stopped = options.stop_fd < 0;
  while (accepted < options.expect && absl::Now() < deadline) {
    pollfd fds[2] = {{listener.get(), POLLIN, 0}, {options.stop_fd, POLLIN, 0}};
    int ready = poll(fds, stopped ? 1 : 2, RemainingMs(deadline));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    if (!stopped && fds[1].revents != 0) {
      char byte;
      // End-of-file (or an error): the other nodes are done. The chief's
      // own connection may still be on its way (its checks start the
      // listener, then connect), so listen a little longer for it.
      if (read(options.stop_fd, &byte, 1) <= 0) {
        stopped = true;
        deadline = std::min(deadline, absl::Now() + kListenAfterStop);
      }
    }
    if (fds[0].revents & POLLIN) {
      int client = accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      ++accepted;
      CloseAfterPeer(client, absl::Seconds(5));
    }
  }
  return 0;
}

absl::StatusOr<std::string> ConnectProbe(absl::string_view target,
                                         absl::Duration timeout) {
  absl::StatusOr<Target> parsed = ParseTarget(target);
  if (!parsed.ok()) return parsed.status();
  absl::Time start = absl::Now();
  absl::Time deadline = start + timeout;
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
      int error = ConnectOnce(*address, attempt_end);
      std::string where = absl::StrCat(target, " (", AddressText(address->ai_addr), ")");
      if (error == 0) {
        freeaddrinfo(found);
        return absl::StrFormat("connected to %s in %.1fs", where,
                               absl::ToDoubleSeconds(absl::Now() - start));
      }
      last_error = absl::StrCat("cannot connect to ", where, ": ", std::strerror(error));
    }
    if (found != nullptr) freeaddrinfo(found);
    absl::SleepFor(std::min(absl::Milliseconds(200), deadline - absl::Now()));
  } while (absl::Now() < deadline);
  return absl::UnavailableError(absl::StrCat(
      last_error, " (kept trying for ", absl::FormatDuration(timeout), ")"));
}

absl::StatusOr<std::string> InterfaceHolding(absl::string_view address) {
  std::string text(address);
  in6_addr want6;
  in_addr want4;
  bool is6 = inet_pton(AF_INET6, text.c_str(), &want6) == 1;
  if (!is6 && inet_pton(AF_INET, text.c_str(), &want4) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", address, "\" is not an IPv4 or IPv6 address"));
  }
  ifaddrs* interfaces = nullptr;
  if (getifaddrs(&interfaces) != 0) {
    return absl::InternalError(absl::StrCat("getifaddrs: ", std::strerror(errno)));
  }
  std::string name;
  for (ifaddrs* i = interfaces; i != nullptr && name.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    if (is6 && i->ifa_addr->sa_family == AF_INET6 &&
        std::memcmp(&reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr, &want6,
                    sizeof(want6)) == 0) {
      name = i->ifa_name;
    } else if (!is6 && i->ifa_addr->sa_family == AF_INET &&
               reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr ==
                   want4.s_addr) {
      name = i->ifa_name;
    }
  }
  freeifaddrs(interfaces);
  if (name.empty()) {
    return absl::NotFoundError(absl::StrCat("no interface holds ", address));
  }
  return name;
}

}  // namespace fleetplan
