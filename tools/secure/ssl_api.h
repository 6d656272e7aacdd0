#ifndef FLEETPLAN_TOOLS_SECURE_SSL_API_H_
#define FLEETPLAN_TOOLS_SECURE_SSL_API_H_

// OpenSSL's libssl (and the libcrypto it needs), opened when an agent
// first makes a TLS channel instead of linked into the agent: most agent
// starts (the apply session, logs, stop, status, probes) open no channel,
// and loading and relocating both libraries was most of the CPU such a
// start took (docs/benchmarks.md).
//
// The header's macros that expand to calls (SSL_CTX_set_min_proto_version
// is SSL_CTX_ctrl, SSL_get_ex_new_index is CRYPTO_get_ex_new_index) are
// called through these functions too: with libssl not linked, a macro or
// function called directly does not link.

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "absl/status/statusor.h"

namespace fleetplan {

// The functions the TLS channels call, as loaded (their types taken from
// the headers' declarations, which are not linked).
struct SslApi {
  decltype(&OPENSSL_init_ssl) init_ssl;
  decltype(&TLS_client_method) client_method;
  decltype(&TLS_server_method) server_method;
  decltype(&SSL_CTX_new) ctx_new;
  decltype(&SSL_CTX_free) ctx_free;
  decltype(&SSL_CTX_ctrl) ctx_ctrl;
  decltype(&SSL_CTX_set_options) ctx_set_options;
  decltype(&SSL_CTX_set_ciphersuites) ctx_set_ciphersuites;
  decltype(&SSL_CTX_set_num_tickets) ctx_set_num_tickets;
  decltype(&SSL_CTX_set_psk_use_session_callback) ctx_set_psk_use_session_callback;
  decltype(&SSL_CTX_set_psk_find_session_callback) ctx_set_psk_find_session_callback;
  decltype(&SSL_CIPHER_find) cipher_find;
  decltype(&SSL_CIPHER_get_handshake_digest) cipher_handshake_digest;
  decltype(&SSL_SESSION_new) session_new;
  decltype(&SSL_SESSION_free) session_free;
  decltype(&SSL_SESSION_set1_master_key) session_set1_master_key;
  decltype(&SSL_SESSION_set_cipher) session_set_cipher;
  decltype(&SSL_SESSION_set_protocol_version) session_set_protocol_version;
  decltype(&SSL_new) ssl_new;
  decltype(&SSL_free) ssl_free;
  decltype(&SSL_set_fd) set_fd;
  decltype(&SSL_get_ex_data) get_ex_data;
  decltype(&SSL_set_ex_data) set_ex_data;
  decltype(&SSL_set_connect_state) set_connect_state;
  decltype(&SSL_set_accept_state) set_accept_state;
  decltype(&SSL_do_handshake) do_handshake;
  decltype(&SSL_read_ex) read_ex;
  decltype(&SSL_write_ex) write_ex;
  decltype(&SSL_get_error) get_error;
  // libcrypto's, found through libssl (which needs it).
  decltype(&CRYPTO_get_ex_new_index) get_ex_new_index;
  decltype(&CRYPTO_memcmp) memcmp;
  decltype(&ERR_get_error) err_get_error;
  decltype(&ERR_error_string_n) err_error_string_n;
  decltype(&ERR_clear_error) err_clear_error;
};

// Opens libssl.so.3 once per process, or says why it cannot: the
// library and its Debian package (libssl3) when it is not installed, the
// functions it lacks when it is too old. Kept for the process's life.
absl::StatusOr<const SslApi*> Ssl();

// The same work for the library `soname`, without keeping it (tests give
// other names).
absl::StatusOr<SslApi> LoadSsl(const char* soname);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SECURE_SSL_API_H_
