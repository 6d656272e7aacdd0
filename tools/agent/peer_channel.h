#ifndef FLEETPLAN_TOOLS_AGENT_PEER_CHANNEL_H_
#define FLEETPLAN_TOOLS_AGENT_PEER_CHANNEL_H_

// One connection between two launch agents (a worker and the job's
// coordinator): supervision messages (tools/protocol/peer_message.h), one
// JSON line each, over TLS with the job's key
// (tools/secure/tls_channel.h) on a non-blocking TCP socket. Nothing the
// peer sends is parsed before the handshake proved it holds the key. It
// remembers when it last heard anything, which is how either side tells
// that the other has gone silent.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tools/agent/sockets.h"
#include "tools/protocol/peer_message.h"
#include "tools/secure/tls_channel.h"

namespace fleetplan {

class PeerChannel {
 public:
  // A peer that sends more than this without a newline is not an agent.
  static constexpr size_t kMaxLine = 1 << 20;

  // Takes `fd` (a connected socket), makes it non-blocking with
  // TCP_NODELAY, and starts TLS as `endpoint`'s side; `now` counts as
  // heard. A channel whose TLS state cannot be made starts closed.
  PeerChannel(Fd fd, std::shared_ptr<TlsEndpoint> endpoint, absl::Time now);

  int fd() const { return fd_; }
  // True after end-of-file, an error, a failed handshake or bad input.
  bool closed() const { return closed_; }
  // True once the peer proved the job's key.
  bool authenticated() const { return tls_ != nullptr && tls_->established(); }
  absl::Time opened() const { return opened_; }
  absl::Time last_heard() const { return last_heard_; }
  // Why the channel closed, for messages ("" while open or at a clean end).
  const std::string& error() const { return error_; }
  // Who is on the other side, once known (a worker's hello names it).
  std::string peer;

  // Completes the handshake, waiting until `deadline` (the worker's side,
  // right after connecting). Unauthenticated when the other side does not
  // hold the key, Unavailable when it broke off or was too slow.
  absl::Status HandshakeBy(absl::Time deadline);
  // Queues `message` and writes what the socket takes now (once the
  // handshake is done; queued until then).
  void Send(const PeerMessage& message);
  // Writes queued bytes for up to `wait` (the last orders before exit).
  void Flush(absl::Duration wait);
  // Advances the handshake, reads what is available (call when poll says
  // readable) and returns the complete messages; a line that is no
  // message (ParsePeerMessage refuses it), or one over kMaxLine, closes the
  // channel.
  std::vector<PeerMessage> Receive(absl::Time now);

 private:
  void WriteQueued();
  void Close(std::string why);

  std::unique_ptr<TlsSocket> tls_;
  int fd_ = -1;
  bool closed_ = false;
  absl::Time opened_;
  absl::Time last_heard_;
  std::string error_;
  std::string in_;
  std::string out_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_PEER_CHANNEL_H_
