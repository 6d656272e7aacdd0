#include "tools/secure/ssl_api.h"

#include "tools/util/lazy_library.h"

namespace fleetplan {
namespace {

constexpr char kSslLibrary[] = "libssl.so.3";

}  // namespace

absl::StatusOr<SslApi> LoadSsl(const char* soname) {
  absl::StatusOr<LazyLibrary> library =
      LazyLibrary::Open(soname, "libssl3", "a TLS channel");
  if (!library.ok()) return library.status();
  SslApi api{};
  library->Load(api.init_ssl, "OPENSSL_init_ssl");
  library->Load(api.client_method, "TLS_client_method");
  library->Load(api.server_method, "TLS_server_method");
  library->Load(api.ctx_new, "SSL_CTX_new");
  library->Load(api.ctx_free, "SSL_CTX_free");
  library->Load(api.ctx_ctrl, "SSL_CTX_ctrl");
  library->Load(api.ctx_set_options, "SSL_CTX_set_options");
  library->Load(api.ctx_set_ciphersuites, "SSL_CTX_set_ciphersuites");
  library->Load(api.ctx_set_num_tickets, "SSL_CTX_set_num_tickets");
  library->Load(api.ctx_set_psk_use_session_callback, "SSL_CTX_set_psk_use_session_callback");
  library->Load(api.ctx_set_psk_find_session_callback, "SSL_CTX_set_psk_find_session_callback");
  library->Load(api.cipher_find, "SSL_CIPHER_find");
  library->Load(api.cipher_handshake_digest, "SSL_CIPHER_get_handshake_digest");
  library->Load(api.session_new, "SSL_SESSION_new");
  library->Load(api.session_free, "SSL_SESSION_free");
  library->Load(api.session_set1_master_key, "SSL_SESSION_set1_master_key");
  library->Load(api.session_set_cipher, "SSL_SESSION_set_cipher");
  library->Load(api.session_set_protocol_version, "SSL_SESSION_set_protocol_version");
  library->Load(api.ssl_new, "SSL_new");
  library->Load(api.ssl_free, "SSL_free");
  library->Load(api.set_fd, "SSL_set_fd");
  library->Load(api.get_ex_data, "SSL_get_ex_data");
  library->Load(api.set_ex_data, "SSL_set_ex_data");
  library->Load(api.set_connect_state, "SSL_set_connect_state");
  library->Load(api.set_accept_state, "SSL_set_accept_state");
  library->Load(api.do_handshake, "SSL_do_handshake");
  library->Load(api.read_ex, "SSL_read_ex");
  library->Load(api.write_ex, "SSL_write_ex");
  library->Load(api.get_error, "SSL_get_error");
  // dlsym on libssl's handle also searches what libssl needs: libcrypto.
  library->Load(api.get_ex_new_index, "CRYPTO_get_ex_new_index");
  library->Load(api.memcmp, "CRYPTO_memcmp");
  library->Load(api.err_get_error, "ERR_get_error");
  library->Load(api.err_error_string_n, "ERR_error_string_n");
  library->Load(api.err_clear_error, "ERR_clear_error");
  return library->Complete(api);
}

absl::StatusOr<const SslApi*> Ssl() {
  return LazyLibrary::Once<SslApi>([] { return LoadSsl(kSslLibrary); });
}

}  // namespace fleetplan
