#include "tools/agent/peer_channel.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <utility>

#include "absl/time/clock.h"

namespace fleetplan {
namespace {

// A peer that sends more than this without a newline is not an agent.
constexpr size_t kMaxLine = 1 << 20;

}  // namespace

PeerChannel::PeerChannel(Fd fd, absl::Time now) : fd_(std::move(fd)), last_heard_(now) {
  int flags = fcntl(fd_.get(), F_GETFL);
  fcntl(fd_.get(), F_SETFL, flags | O_NONBLOCK);
  int on = 1;
  setsockopt(fd_.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

void PeerChannel::Send(const nlohmann::json& message) {
  if (closed_) return;
  out_ += message.dump();
  out_ += '\n';
  WriteQueued();
}

void PeerChannel::WriteQueued() {
  while (!out_.empty() && !closed_) {
    ssize_t n = send(fd_.get(), out_.data(), out_.size(), MSG_NOSIGNAL);
    if (n > 0) {
      out_.erase(0, n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;
    } else {
      closed_ = true;
    }
  }
}

void PeerChannel::Flush(absl::Duration wait) {
  absl::Time deadline = absl::Now() + wait;
  while (!out_.empty() && !closed_ && absl::Now() < deadline) {
    pollfd pfd{fd_.get(), POLLOUT, 0};
    poll(&pfd, 1, RemainingMs(deadline));
    WriteQueued();
  }
}

std::vector<nlohmann::json> PeerChannel::Receive(absl::Time now) {
  std::vector<nlohmann::json> messages;
  char buffer[16384];
  while (!closed_) {
    ssize_t n = recv(fd_.get(), buffer, sizeof(buffer), 0);
    if (n > 0) {
      in_.append(buffer, n);
      last_heard_ = now;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    closed_ = true;  // end-of-file or an error
  }
  size_t start = 0;
  for (size_t end; (end = in_.find('\n', start)) != std::string::npos; start = end + 1) {
    nlohmann::json message = nlohmann::json::parse(in_.begin() + start, in_.begin() + end,
                                                   nullptr, /*allow_exceptions=*/false);
    if (!message.is_object()) {
      closed_ = true;
      break;
    }
    messages.push_back(std::move(message));
  }
  in_.erase(0, start);
  if (in_.size() > kMaxLine) closed_ = true;
  return messages;
}

}  // namespace fleetplan
