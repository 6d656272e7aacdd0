#include "plugins/ssh/host_key_check.h"

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "plugins/ssh/libssh_api.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

// Nodes connect in parallel; appends to one known_hosts file must not mix.
absl::Mutex known_hosts_mutex(absl::kConstInit);

}  // namespace

absl::StatusOr<std::string> ServerKeyFingerprint(ssh_session session) {
  ssh_key key = nullptr;
  if (Libssh().get_server_publickey(session, &key) != SSH_OK) {
    return absl::InternalError(
        absl::StrCat("no server host key: ", Libssh().get_error(session)));
  }
  unsigned char* hash = nullptr;
  size_t hash_size = 0;
  int rc = Libssh().get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hash_size);
  Libssh().key_free(key);
  if (rc != SSH_OK) return absl::InternalError("cannot hash the server host key");
  char* text = Libssh().get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hash_size);
  Libssh().clean_pubkey_hash(&hash);
  if (text == nullptr) return absl::InternalError("cannot format the host key fingerprint");
  std::string fingerprint(text);
  Libssh().string_free_char(text);
  return fingerprint;
}

absl::Status VerifyHostKey(ssh_session session, const std::string& node, bool accept_new) {
  FP_ASSIGN_OR_RETURN(std::string fingerprint, ServerKeyFingerprint(session));
  absl::MutexLock lock(&known_hosts_mutex);
  switch (Libssh().session_is_known_server(session)) {
    case SSH_KNOWN_HOSTS_OK:
      return absl::OkStatus();
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER:
      // Never accepted: it is what a man-in-the-middle looks like.
      return absl::PermissionDeniedError(absl::StrCat(
          "node \"", node, "\": host key CHANGED (now ", fingerprint,
          "); refusing to connect. If the node was reinstalled, remove its old "
          "entry from known_hosts (ssh-keygen -R)"));
    case SSH_KNOWN_HOSTS_NOT_FOUND:
    case SSH_KNOWN_HOSTS_UNKNOWN:
      if (!accept_new) {
        return absl::FailedPreconditionError(absl::StrCat(
            "node \"", node, "\": unknown host key ", fingerprint,
            "; check it, then accept it with --accept-new-host-keys (or add it "
            "to known_hosts)"));
      }
      if (Libssh().session_update_known_hosts(session) != SSH_OK) {
        return absl::InternalError(absl::StrCat("node \"", node, "\": cannot record host key ",
                                                fingerprint, ": ", Libssh().get_error(session)));
      }
      return absl::OkStatus();
    case SSH_KNOWN_HOSTS_ERROR:
    default:
      return absl::InternalError(absl::StrCat("node \"", node, "\": cannot check host key ",
                                              fingerprint, ": ", Libssh().get_error(session)));
  }
}

}  // namespace fleetplan
