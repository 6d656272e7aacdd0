#include "tools/secure/tls_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/secure/crypto_api.h"
#include "tools/secure/ssl_api.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

// TLS_AES_128_GCM_SHA256, the suite every TLS 1.3 implementation has; the
// PSK is bound to it.
constexpr unsigned char kSuiteId[2] = {0x13, 0x01};
constexpr char kSuiteName[] = "TLS_AES_128_GCM_SHA256";

// The loaded libssl. Everything below runs for an endpoint, and
// TlsEndpoint::Make makes none without it.
const SslApi& Api() {
  static const SslApi& api = *Ssl().value();
  return api;
}

// Where each SSL finds its endpoint (ex data index, made once; what the
// macro SSL_get_ex_new_index calls).
int EndpointIndex() {
  static const int index =
      Api().get_ex_new_index(CRYPTO_EX_INDEX_SSL, 0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

std::string OpenSslErrors() {
  std::string text;
  for (unsigned long error; (error = Api().err_get_error()) != 0;) {
    char buffer[256];
    Api().err_error_string_n(error, buffer, sizeof(buffer));
    if (!text.empty()) text += "; ";
    text += buffer;
  }
  return text;
}

// The PSK as an SSL_SESSION, as OpenSSL's callbacks want it; null on failure.
SSL_SESSION* PskSession(SSL* ssl, const TlsEndpoint& endpoint) {
  const SSL_CIPHER* cipher = Api().cipher_find(ssl, kSuiteId);
  if (cipher == nullptr) return nullptr;
  SSL_SESSION* session = Api().session_new();
  if (session == nullptr) return nullptr;
  if (!Api().session_set1_master_key(session,
                                     reinterpret_cast<const unsigned char*>(endpoint.psk().data()),
                                     endpoint.psk().size()) ||
      !Api().session_set_cipher(session, cipher) ||
      !Api().session_set_protocol_version(session, TLS1_3_VERSION)) {
    Api().session_free(session);
    return nullptr;
  }
  return session;
}

const TlsEndpoint* EndpointOf(SSL* ssl) {
  return static_cast<const TlsEndpoint*>(Api().get_ex_data(ssl, EndpointIndex()));
}

// Client: offers the purpose's identity and key.
int UsePskSession(SSL* ssl, const EVP_MD* md, const unsigned char** id, size_t* id_length,
                  SSL_SESSION** session) {
  const TlsEndpoint* endpoint = EndpointOf(ssl);
  *session = nullptr;
  *id = nullptr;
  *id_length = 0;
  if (endpoint == nullptr) return 0;
  const SSL_CIPHER* cipher = Api().cipher_find(ssl, kSuiteId);
  // Called again after a HelloRetryRequest with the chosen hash: the PSK
  // only fits its own suite's.
  if (md != nullptr && (cipher == nullptr || md != Api().cipher_handshake_digest(cipher))) {
    return 1;
  }
  *session = PskSession(ssl, *endpoint);
  if (*session == nullptr) return 0;
  *id = reinterpret_cast<const unsigned char*>(endpoint->identity().data());
  *id_length = endpoint->identity().size();
  return 1;
}

// Server: knows one identity, the purpose's; any other finds no PSK, and
// with no certificate to fall back on, the handshake fails.
int FindPskSession(SSL* ssl, const unsigned char* identity, size_t identity_length,
                   SSL_SESSION** session) {
  const TlsEndpoint* endpoint = EndpointOf(ssl);
  *session = nullptr;
  if (endpoint == nullptr) return 0;
  if (identity_length != endpoint->identity().size() ||
      Api().memcmp(identity, endpoint->identity().data(), identity_length) != 0) {
    return 1;
  }
  *session = PskSession(ssl, *endpoint);
  return *session != nullptr ? 1 : 0;
}

// The purpose's key: HMAC-SHA256(job key, "fleetplan psk " + purpose).
std::string DerivePsk(const CryptoApi& crypto, const JobKey& key, absl::string_view purpose) {
  std::string label = absl::StrCat("fleetplan psk ", purpose);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  crypto.hmac(crypto.sha256(), key.bytes.data(), static_cast<int>(key.bytes.size()),
              reinterpret_cast<const unsigned char*>(label.data()), label.size(), mac, &length);
  return std::string(reinterpret_cast<const char*>(mac), length);
}

}  // namespace

absl::StatusOr<std::shared_ptr<TlsEndpoint>> TlsEndpoint::Make(Side side, const JobKey& key,
                                                               absl::string_view purpose) {
  // The node's openssl.cnf is not read: every setting of the channel is
  // made here, so a system-wide policy changes nothing. Nor are the legacy
  // name tables of every cipher and digest built (TLS 1.3 fetches its one
  // suite from the provider), nor everything freed again at exit (the
  // relay's threads may still run then; the freeing alone took about 5 ms
  // of CPU in a program that only made a context, under perf stat).
  FP_RETURN_IF_ERROR(Ssl().status());
  FP_ASSIGN_OR_RETURN(const CryptoApi* crypto, Crypto());
  static const bool initialized =
      Api().init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
                         OPENSSL_INIT_NO_ADD_ALL_DIGESTS | OPENSSL_INIT_NO_ATEXIT,
                     nullptr) == 1;
  if (!initialized) return absl::InternalError(absl::StrCat("TLS: ", OpenSslErrors()));
  SSL_CTX* context =
      Api().ctx_new(side == Side::kClient ? Api().client_method() : Api().server_method());
  if (context == nullptr) {
    return absl::InternalError(absl::StrCat("TLS: ", OpenSslErrors()));
  }
  // SSL_CTX_set_{min,max}_proto_version, SSL_CTX_set_session_cache_mode
  // and SSL_CTX_set_mode are macros over SSL_CTX_ctrl.
  bool ok = Api().ctx_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_3_VERSION, nullptr) &&
            Api().ctx_ctrl(context, SSL_CTRL_SET_MAX_PROTO_VERSION, TLS1_3_VERSION, nullptr) &&
            Api().ctx_set_ciphersuites(context, kSuiteName);
  // No tickets: each connection proves the key anew, and a non-blocking
  // reader sees no post-handshake message.
  Api().ctx_set_num_tickets(context, 0);
  // A peer that vanishes without close_notify is an end like any other:
  // every message is framed (lines, sizes), so truncation shows anyway.
  Api().ctx_set_options(context, SSL_OP_NO_TICKET | SSL_OP_IGNORE_UNEXPECTED_EOF);
  Api().ctx_ctrl(context, SSL_CTRL_SET_SESS_CACHE_MODE, SSL_SESS_CACHE_OFF, nullptr);
  Api().ctx_ctrl(context, SSL_CTRL_MODE,
                 SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, nullptr);
  if (side == Side::kClient) {
    Api().ctx_set_psk_use_session_callback(context, UsePskSession);
  } else {
    Api().ctx_set_psk_find_session_callback(context, FindPskSession);
  }
  if (!ok) {
    std::string errors = OpenSslErrors();
    Api().ctx_free(context);
    return absl::InternalError(absl::StrCat("TLS: ", errors));
  }
  return std::shared_ptr<TlsEndpoint>(
      new TlsEndpoint(side, context, std::string(purpose), DerivePsk(*crypto, key, purpose)));
}

TlsEndpoint::~TlsEndpoint() { Api().ctx_free(context_); }

absl::StatusOr<std::unique_ptr<TlsSocket>> TlsSocket::Make(std::shared_ptr<TlsEndpoint> endpoint,
                                                          int fd) {
  SSL* ssl = Api().ssl_new(endpoint->context());
  if (ssl == nullptr || !Api().set_fd(ssl, fd) ||
      !Api().set_ex_data(ssl, EndpointIndex(), endpoint.get())) {
    std::string errors = OpenSslErrors();
    if (ssl != nullptr) Api().ssl_free(ssl);
    close(fd);
    return absl::InternalError(absl::StrCat("TLS: ", errors));
  }
  if (endpoint->side() == TlsEndpoint::Side::kClient) {
    Api().set_connect_state(ssl);
  } else {
    Api().set_accept_state(ssl);
  }
  return std::unique_ptr<TlsSocket>(new TlsSocket(std::move(endpoint), fd, ssl));
}

TlsSocket::~TlsSocket() {
  Api().ssl_free(ssl_);
  if (fd_ >= 0) close(fd_);
}

TlsSocket::Progress TlsSocket::Classify(int result) {
  int error = Api().get_error(ssl_, result);
  switch (error) {
    case SSL_ERROR_WANT_READ:
      return Progress::kWantRead;
    case SSL_ERROR_WANT_WRITE:
      return Progress::kWantWrite;
    case SSL_ERROR_ZERO_RETURN:
      last_error_ = "the peer closed the connection";
      peer_closed_ = true;
      break;
    case SSL_ERROR_SYSCALL:
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        last_error_ = "timed out";
      } else {
        last_error_ = errno != 0 ? std::strerror(errno) : "the connection ended";
      }
      break;
    default:
      last_error_ = OpenSslErrors();
      if (last_error_.empty()) last_error_ = absl::StrCat("TLS error ", error);
      break;
  }
  Api().err_clear_error();
  return Progress::kFailed;
}

TlsSocket::Progress TlsSocket::Handshake() {
  if (established_) return Progress::kDone;
  Api().err_clear_error();
  errno = 0;
  int result = Api().do_handshake(ssl_);
  if (result == 1) {
    established_ = true;
    return Progress::kDone;
  }
  return Classify(result);
}

absl::Status TlsSocket::HandshakeBy(absl::Time deadline) {
  // Non-blocking while it lasts, so that the deadline holds; the socket's
  // own mode again afterwards.
  int flags = fcntl(fd_, F_GETFL);
  fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
  struct Restore {
    int fd, flags;
    ~Restore() { fcntl(fd, F_SETFL, flags); }
  } restore{fd_, flags};
  while (true) {
    Progress progress = Handshake();
    if (progress == Progress::kDone) return absl::OkStatus();
    if (progress == Progress::kFailed) {
      return absl::UnauthenticatedError(
          absl::StrCat("the TLS handshake with the job's key failed: ", last_error_));
    }
    pollfd pfd{fd_, static_cast<short>(progress == Progress::kWantRead ? POLLIN : POLLOUT), 0};
    int ms = static_cast<int>(
        std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now())));
    int ready = poll(&pfd, 1, ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      return absl::UnavailableError("the TLS handshake took too long");
    }
  }
}

long TlsSocket::ReadSome(char* buffer, size_t size) {
  Api().err_clear_error();
  errno = 0;
  size_t got = 0;
  if (Api().read_ex(ssl_, buffer, size, &got) == 1) return static_cast<long>(got);
  Progress progress = Classify(0);
  return progress == Progress::kFailed ? -1 : 0;
}

long TlsSocket::WriteSome(const char* data, size_t size) {
  Api().err_clear_error();
  errno = 0;
  size_t written = 0;
  if (Api().write_ex(ssl_, data, size, &written) == 1) return static_cast<long>(written);
  Progress progress = Classify(0);
  return progress == Progress::kFailed ? -1 : 0;
}

absl::Status TlsSocket::SendAll(absl::string_view data) {
  while (!data.empty()) {
    long n = WriteSome(data.data(), data.size());
    if (n < 0) return absl::UnavailableError(absl::StrCat("sending: ", last_error_));
    if (n == 0) {
      // A blocking socket reports "would block" only when SO_SNDTIMEO ran out.
      return absl::UnavailableError("sending: timed out");
    }
    data.remove_prefix(n);
  }
  return absl::OkStatus();
}

absl::Status TlsSocket::ReceiveExactly(char* buffer, size_t size) {
  while (size > 0) {
    long n = ReadSome(buffer, size);
    if (n < 0 && peer_closed_) return absl::UnavailableError("the connection closed early");
    if (n < 0) return absl::UnavailableError(absl::StrCat("receiving: ", last_error_));
    if (n == 0) return absl::UnavailableError("receiving: timed out");
    buffer += n;
    size -= n;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> TlsSocket::ReceiveLine(size_t limit) {
  std::string line;
  while (true) {
    char c;
    if (absl::Status got = ReceiveExactly(&c, 1); !got.ok()) return got;
    if (c == '\n') return line;
    if (line.size() >= limit) {
      return absl::UnavailableError(absl::StrCat("a line longer than ", limit, " bytes"));
    }
    line.push_back(c);
  }
}

}  // namespace fleetplan
