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
#include "tools/agent/sockets.h"
#include "tools/protocol/check_line.h"

namespace fleetplan {
namespace {

// How long a listener told to stop still accepts, for a connection already
// on its way.
constexpr absl::Duration kListenAfterStop = absl::Seconds(3);
// Accepted connections kept open at once while their clients close them.
constexpr size_t kMaxOpenClients = 64;

}  // namespace

std::string BindFailure(const PortRole& role, int error) {
  if (error == EADDRINUSE) {
    return absl::StrCat(
        "port ", role.port, ": in use on this node (bind: ", std::strerror(error),
        "); expected it free for ", role.purpose, "; fix: stop the process "
        "that listens on it (ss -ltnp 'sport = :", role.port,
        "' names it), or choose another ", role.key);
  }
  return absl::StrCat("port ", role.port, ": cannot be bound (bind: ", std::strerror(error),
                      "); expected ", role.purpose, " to be able to listen on it; fix: "
                      "choose another ", role.key, " (above 1023)");
}

namespace {

// The accepted connections of `clients` still open; those whose client
// closed first (`polled`, in the same order, says which were read) are
// closed here.
std::vector<int> StillOpen(const std::vector<int>& clients, const pollfd* polled) {
  std::vector<int> open_clients;
  for (size_t i = 0; i < clients.size(); ++i) {
    const pollfd& client = polled[i];
    char buffer[256];
    ssize_t n = client.revents == 0 ? 1 : read(client.fd, buffer, sizeof(buffer));
    if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN))) {
      open_clients.push_back(client.fd);
    } else {
      close(client.fd);  // its client closed first
    }
  }
  return open_clients;
}

// Accepts one connection of `listener` into `clients`, at most
// kMaxOpenClients of them (past that the oldest is closed).
bool Accept(int listener, std::vector<int>* clients) {
  int client = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (client < 0) return false;
  if (clients->size() >= kMaxOpenClients) {
    close(clients->front());
    clients->erase(clients->begin());
  }
  clients->push_back(client);
  return true;
}

}  // namespace

void ServeListeners(const std::vector<int>& listeners, int expect, absl::Duration timeout,
                    int stop_fd) {
  absl::Time deadline = absl::Now() + timeout;
  std::vector<int> accepted(listeners.size(), 0);
  // Accepted connections, closed once their client closed first (so that
  // TIME_WAIT stays on its side) or when serving ends; never waited on one
  // at a time, so a client that keeps its connection open holds nothing up.
  std::vector<int> clients;
  bool stopped = stop_fd < 0;
  auto counted = [&] {
    return std::all_of(accepted.begin(), accepted.end(), [&](int n) { return n >= expect; });
  };
  // Anyone who can reach the port can add to the count, so with `stop_fd`
  // the count never ends serving early: the end of `stop_fd` (the other
  // nodes are done) does. Without one, the count is all there is.
  auto done = [&] { return stopped && counted(); };
  while (!done() && absl::Now() < deadline) {
    std::vector<pollfd> fds;
    for (int listener : listeners) fds.push_back({listener, POLLIN, 0});
    for (int client : clients) fds.push_back({client, POLLIN, 0});
    if (!stopped) fds.push_back({stop_fd, POLLIN, 0});
    int ready = poll(fds.data(), fds.size(), RemainingMs(deadline));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    if (!stopped && fds.back().revents != 0) {
      char byte;
      // End-of-file (or an error): the other nodes are done. This node's
      // own connection may still be on its way, so listen a little longer
      // unless every listener had its count.
      if (read(stop_fd, &byte, 1) <= 0) {
        stopped = true;
        deadline = std::min(deadline, absl::Now() + kListenAfterStop);
      }
    }
    clients = StillOpen(clients, &fds[listeners.size()]);
    for (size_t i = 0; i < listeners.size(); ++i) {
      if ((fds[i].revents & POLLIN) != 0 && Accept(listeners[i], &clients)) ++accepted[i];
    }
  }
  for (int client : clients) close(client);
}

int RunListenProbe(const ListenProbeOptions& options, std::FILE* out) {
  PortRole role{options.port, "the rendezvous (MASTER_PORT)", "[network] master_port"};
  int bound = BindAnyAddress(options.port);
  if (bound < 0) {
    std::fprintf(out, "%s\n",
                 FormatCheckLine({std::string(kCheckPort), CheckStatus::kFail,
                                  BindFailure(role, -bound)})
                     .c_str());
    std::fflush(out);
    return 1;
  }
  Fd listener(bound);
  std::fprintf(out, "%s\n%s\n",
               FormatCheckLine({std::string(kCheckPort), CheckStatus::kOk,
                                absl::StrCat("port ", options.port,
                                             ": free; listening until the ", options.expect,
                                             " nodes have connected")})
                   .c_str(),
               FormatFactLine(kFactListening, absl::StrCat(options.port)).c_str());
  std::fflush(out);
  ServeListeners({listener.get()}, options.expect, options.timeout, options.stop_fd);
  return 0;
}

absl::StatusOr<std::string> ConnectProbe(absl::string_view target,
                                         absl::Duration timeout) {
  absl::Time start = absl::Now();
  absl::StatusOr<Connected> connected = ConnectWithRetry(target, timeout);
  if (!connected.ok()) return connected.status();
  return absl::StrFormat("connected to %s in %.1fs", connected->address,
                         absl::ToDoubleSeconds(absl::Now() - start));
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
