#ifndef FLEETPLAN_TOOLS_SECURE_TLS_CHANNEL_H_
#define FLEETPLAN_TOOLS_SECURE_TLS_CHANNEL_H_

// The agents' connections to each other (supervision, the sync relay),
// mutually authenticated and encrypted with the per-job key: OpenSSL's
// TLS 1.3 with an external pre-shared key (RFC 8446 section 2.2), in
// psk_dhe_ke mode, so each connection also gets fresh ECDHE keys. Both
// sides prove the key in the handshake's Finished messages; a peer without
// it fails the handshake before any byte it sent reaches the caller. No
// certificates, no session tickets, no early data (nothing to replay).
//
// Each purpose (supervision, relay) uses its own key derived from the job
// key and its own PSK identity, so a connection made for one is refused by
// the other.

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/secure/job_key.h"

namespace fleetplan {

// What a connection is for: its PSK identity and derived key.
inline constexpr absl::string_view kSupervisionPurpose = "fleetplan-supervision-1";
inline constexpr absl::string_view kRelayPurpose = "fleetplan-relay-1";

// One side's settings for one purpose: an SSL_CTX holding the derived key.
// Shared by every connection of that side; thread-safe once made.
class TlsEndpoint {
 public:
  enum class Side { kClient, kServer };

  // Internal when OpenSSL cannot set it up.
  static absl::StatusOr<std::shared_ptr<TlsEndpoint>> Make(Side side, const JobKey& key,
                                                           absl::string_view purpose);
  ~TlsEndpoint();
  TlsEndpoint(const TlsEndpoint&) = delete;
  TlsEndpoint& operator=(const TlsEndpoint&) = delete;

  Side side() const { return side_; }
  SSL_CTX* context() const { return context_; }
  const std::string& identity() const { return identity_; }
  const std::string& psk() const { return psk_; }

 private:
  TlsEndpoint(Side side, SSL_CTX* context, std::string identity, std::string psk)
      : side_(side), context_(context), identity_(std::move(identity)), psk_(std::move(psk)) {}

  Side side_;
  SSL_CTX* context_;
  std::string identity_;
  std::string psk_;
};

// One TLS connection over a connected socket it owns (and closes). OpenSSL
// writes to the socket itself: its users ignore SIGPIPE, as the agent does. Non-blocking use
// (the supervision loop): Handshake, ReadSome and WriteSome never wait.
// Blocking use (the relay's threads): HandshakeBy, then SendAll,
// ReceiveExactly and ReceiveLine over a blocking socket whose
// SO_RCVTIMEO/SO_SNDTIMEO bound each wait.
class TlsSocket {
 public:
  // Internal when OpenSSL cannot make the connection's state.
  static absl::StatusOr<std::unique_ptr<TlsSocket>> Make(std::shared_ptr<TlsEndpoint> endpoint,
                                                        int fd);
  ~TlsSocket();
  TlsSocket(const TlsSocket&) = delete;
  TlsSocket& operator=(const TlsSocket&) = delete;

  int fd() const { return fd_; }
  bool established() const { return established_; }

  enum class Progress { kDone, kWantRead, kWantWrite, kFailed };
  // Advances the handshake as far as the socket allows. kFailed: the peer
  // did not prove the key (or the connection broke); last_error() says how.
  Progress Handshake();
  // Handshake until done or `deadline`, polling the socket (non-blocking
  // meanwhile, whatever its mode). Unauthenticated
  // when the peer failed to prove the key, Unavailable when it broke off or
  // took too long.
  absl::Status HandshakeBy(absl::Time deadline);

  // Non-blocking reads and writes of an established connection: the bytes
  // moved (> 0), 0 when the socket would block, -1 once the connection
  // ended or broke (end-of-file included).
  long ReadSome(char* buffer, size_t size);
  long WriteSome(const char* data, size_t size);

  // Blocking use. Unavailable on a socket error, a timeout or the end of
  // the stream.
  absl::Status SendAll(absl::string_view data);
  absl::Status ReceiveExactly(char* buffer, size_t size);
  // One '\n'-terminated line (without it), at most `limit` bytes.
  absl::StatusOr<std::string> ReceiveLine(size_t limit);

  // Why the last operation failed, for messages.
  const std::string& last_error() const { return last_error_; }
  // True once the peer ended the connection (end-of-file, close_notify).
  bool peer_closed() const { return peer_closed_; }

 private:
  TlsSocket(std::shared_ptr<TlsEndpoint> endpoint, int fd, SSL* ssl)
      : endpoint_(std::move(endpoint)), fd_(fd), ssl_(ssl) {}
  // Maps SSL_get_error for `result` to a Progress, noting errors.
  Progress Classify(int result);

  std::shared_ptr<TlsEndpoint> endpoint_;
  int fd_;
  SSL* ssl_;
  bool established_ = false;
  bool peer_closed_ = false;
  std::string last_error_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SECURE_TLS_CHANNEL_H_
