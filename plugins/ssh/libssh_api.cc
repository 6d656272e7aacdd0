#include "plugins/ssh/libssh_api.h"

#include <cstdlib>

#include "tools/util/lazy_library.h"

namespace fleetplan {

absl::StatusOr<LibsshApi> LoadLibssh(const char* soname) {
  absl::StatusOr<LazyLibrary> library = LazyLibrary::Open(soname, "libssh-4", "the ssh transport");
  if (!library.ok()) return library.status();
  LibsshApi api{};
  library->Load(api.new_session, "ssh_new");
  library->Load(api.free_session, "ssh_free");
  library->Load(api.options_set, "ssh_options_set");
  library->Load(api.options_get, "ssh_options_get");
  library->Load(api.options_parse_config, "ssh_options_parse_config");
  library->Load(api.connect, "ssh_connect");
  library->Load(api.is_connected, "ssh_is_connected");
  library->Load(api.disconnect, "ssh_disconnect");
  library->Load(api.get_error, "ssh_get_error");
  library->Load(api.get_fd, "ssh_get_fd");
  library->Load(api.string_free_char, "ssh_string_free_char");
  library->Load(api.userauth_publickey_auto, "ssh_userauth_publickey_auto");
  library->Load(api.userauth_publickey, "ssh_userauth_publickey");
  library->Load(api.pki_import_privkey_file, "ssh_pki_import_privkey_file");
  library->Load(api.key_free, "ssh_key_free");
  library->Load(api.get_server_publickey, "ssh_get_server_publickey");
  library->Load(api.get_publickey_hash, "ssh_get_publickey_hash");
  library->Load(api.get_fingerprint_hash, "ssh_get_fingerprint_hash");
  library->Load(api.clean_pubkey_hash, "ssh_clean_pubkey_hash");
  library->Load(api.session_is_known_server, "ssh_session_is_known_server");
  library->Load(api.session_update_known_hosts, "ssh_session_update_known_hosts");
  library->Load(api.channel_new, "ssh_channel_new");
  library->Load(api.channel_open_session, "ssh_channel_open_session");
  library->Load(api.channel_request_exec, "ssh_channel_request_exec");
  library->Load(api.channel_request_subsystem, "ssh_channel_request_subsystem");
  library->Load(api.channel_write, "ssh_channel_write");
  library->Load(api.channel_read_timeout, "ssh_channel_read_timeout");
  library->Load(api.channel_read_nonblocking, "ssh_channel_read_nonblocking");
  library->Load(api.channel_is_eof, "ssh_channel_is_eof");
  library->Load(api.channel_send_eof, "ssh_channel_send_eof");
  library->Load(api.channel_get_exit_status, "ssh_channel_get_exit_status");
  library->Load(api.channel_get_session, "ssh_channel_get_session");
  library->Load(api.channel_close, "ssh_channel_close");
  library->Load(api.channel_free, "ssh_channel_free");
  library->Load(api.set_channel_callbacks, "ssh_set_channel_callbacks");
  return library->Complete(api);
}

absl::StatusOr<const LibsshApi*> OpenLibssh() {
  return LazyLibrary::Once<LibsshApi>([] { return LoadLibssh(kLibsshLibrary); });
}

const LibsshApi& Libssh() {
  absl::StatusOr<const LibsshApi*> api = OpenLibssh();
  // A session cannot exist without the library: reaching here without it
  // is a bug, not a condition to report.
  if (!api.ok()) std::abort();
  return **api;
}

}  // namespace fleetplan
