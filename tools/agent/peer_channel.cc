#include "tools/agent/peer_channel.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fleetplan {

PeerChannel::PeerChannel(Fd fd, std::shared_ptr<TlsEndpoint> endpoint, absl::Time now)
    : opened_(now), last_heard_(now) {
  int raw = fd.release();
  fcntl(raw, F_SETFL, fcntl(raw, F_GETFL) | O_NONBLOCK);
  int on = 1;
  setsockopt(raw, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  fd_ = raw;
  if (endpoint == nullptr) {
    close(raw);
    fd_ = -1;
    Close("no job key to prove");
    return;
  }
  absl::StatusOr<std::unique_ptr<TlsSocket>> tls = TlsSocket::Make(std::move(endpoint), raw);
  if (!tls.ok()) {
    fd_ = -1;  // closed with it
    Close(std::string(tls.status().message()));
    return;
  }
  tls_ = *std::move(tls);
}

void PeerChannel::Close(std::string why) {
  if (closed_) return;
  closed_ = true;
  error_ = std::move(why);
  in_.clear();
  out_.clear();
}

absl::Status PeerChannel::HandshakeBy(absl::Time deadline) {
  if (closed_) return absl::UnavailableError(error_);
  absl::Status status = tls_->HandshakeBy(deadline);
  if (!status.ok()) {
    Close(std::string(status.message()));
    return status;
  }
  WriteQueued();
  return absl::OkStatus();
}

void PeerChannel::Send(const PeerMessage& message) {
  if (closed_) return;
  out_ += SerializePeerMessage(message);
  out_ += '\n';
  WriteQueued();
}

void PeerChannel::WriteQueued() {
  while (!out_.empty() && !closed_ && authenticated()) {
    long n = tls_->WriteSome(out_.data(), out_.size());
    if (n > 0) {
      out_.erase(0, n);
    } else if (n == 0) {
      return;  // the socket is full; the rest goes later
    } else {
      Close(tls_->last_error());
    }
  }
}

void PeerChannel::Flush(absl::Duration wait) {
  absl::Time deadline = absl::Now() + wait;
  while (!out_.empty() && !closed_ && authenticated() && absl::Now() < deadline) {
    pollfd pfd{fd_, POLLOUT, 0};
    poll(&pfd, 1, RemainingMs(deadline));
    WriteQueued();
  }
}

std::vector<PeerMessage> PeerChannel::Receive(absl::Time now) {
  std::vector<PeerMessage> messages;
  if (closed_) return messages;
  if (!authenticated()) {
    TlsSocket::Progress progress = tls_->Handshake();
    if (progress == TlsSocket::Progress::kFailed) {
      Close(absl::StrCat("did not prove the job's key: ", tls_->last_error()));
      return messages;
    }
    if (progress != TlsSocket::Progress::kDone) return messages;
    WriteQueued();
  }
  char buffer[16384];
  while (!closed_) {
    long n = tls_->ReadSome(buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) {
      Close(tls_->peer_closed() ? "" : tls_->last_error());
      break;
    }
    in_.append(buffer, n);
    last_heard_ = now;
    // Bounded before parsing: a peer costs at most one line's worth.
    if (in_.size() > kMaxLine && in_.find('\n') == std::string::npos) {
      Close(absl::StrCat("a line longer than ", kMaxLine, " bytes"));
      return messages;
    }
    size_t start = 0;
    for (size_t end; (end = in_.find('\n', start)) != std::string::npos; start = end + 1) {
      if (end - start > kMaxLine) {
        Close(absl::StrCat("a line longer than ", kMaxLine, " bytes"));
        return messages;
      }
      absl::StatusOr<PeerMessage> message =
          ParsePeerMessage(absl::string_view(in_).substr(start, end - start));
      if (!message.ok()) {
        Close(std::string(message.status().message()));
        return messages;
      }
      messages.push_back(*std::move(message));
    }
    in_.erase(0, start);
  }
  return messages;
}

}  // namespace fleetplan
