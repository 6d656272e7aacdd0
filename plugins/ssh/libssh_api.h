#ifndef FLEETPLAN_PLUGINS_SSH_LIBSSH_API_H_
#define FLEETPLAN_PLUGINS_SSH_LIBSSH_API_H_

// libssh, opened when the ssh transport first connects instead of linked
// into every fleetplan binary: with the GSSAPI it is built with it brings
// Kerberos (seven objects) and libcrypto, whose relocations were most of
// what the dynamic loader did before any command ran.

#include <libssh/callbacks.h>
#include <libssh/libssh.h>

#include "absl/status/statusor.h"

namespace fleetplan {

// The libssh functions the ssh transport calls, as loaded (their types
// taken from the headers' declarations, which are not linked).
struct LibsshApi {
  decltype(&ssh_new) new_session;
  decltype(&ssh_free) free_session;
  decltype(&ssh_options_set) options_set;
  decltype(&ssh_options_get) options_get;
  decltype(&ssh_options_parse_config) options_parse_config;
  decltype(&ssh_connect) connect;
  decltype(&ssh_is_connected) is_connected;
  decltype(&ssh_disconnect) disconnect;
  decltype(&ssh_get_error) get_error;
  decltype(&ssh_get_fd) get_fd;
  decltype(&ssh_string_free_char) string_free_char;
  decltype(&ssh_userauth_publickey_auto) userauth_publickey_auto;
  decltype(&ssh_userauth_publickey) userauth_publickey;
  decltype(&ssh_pki_import_privkey_file) pki_import_privkey_file;
  decltype(&ssh_key_free) key_free;
  decltype(&ssh_get_server_publickey) get_server_publickey;
  decltype(&ssh_get_publickey_hash) get_publickey_hash;
  decltype(&ssh_get_fingerprint_hash) get_fingerprint_hash;
  decltype(&ssh_clean_pubkey_hash) clean_pubkey_hash;
  decltype(&ssh_session_is_known_server) session_is_known_server;
  decltype(&ssh_session_update_known_hosts) session_update_known_hosts;
  decltype(&ssh_channel_new) channel_new;
  decltype(&ssh_channel_open_session) channel_open_session;
  decltype(&ssh_channel_request_exec) channel_request_exec;
  decltype(&ssh_channel_request_subsystem) channel_request_subsystem;
  decltype(&ssh_channel_write) channel_write;
  decltype(&ssh_channel_read_timeout) channel_read_timeout;
  decltype(&ssh_channel_read_nonblocking) channel_read_nonblocking;
  decltype(&ssh_channel_is_eof) channel_is_eof;
  decltype(&ssh_channel_send_eof) channel_send_eof;
  decltype(&ssh_channel_get_exit_status) channel_get_exit_status;
  decltype(&ssh_channel_get_session) channel_get_session;
  decltype(&ssh_channel_close) channel_close;
  decltype(&ssh_channel_free) channel_free;
  decltype(&ssh_set_channel_callbacks) set_channel_callbacks;
};

inline constexpr char kLibsshLibrary[] = "libssh.so.4";

// Opens libssh once per process (at the first connection); an error naming
// the library and its Debian package when it cannot be opened or lacks a
// function.
absl::StatusOr<const LibsshApi*> OpenLibssh();

// The functions OpenLibssh loaded. Only code that holds a session calls it:
// a session exists only after OpenLibssh succeeded.
const LibsshApi& Libssh();

// Opens `soname` as libssh (OpenLibssh's work, without keeping it; tests
// give other names).
absl::StatusOr<LibsshApi> LoadLibssh(const char* soname);

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SSH_LIBSSH_API_H_
