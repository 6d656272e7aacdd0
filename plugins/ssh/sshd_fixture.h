#ifndef FLEETPLAN_PLUGINS_SSH_SSHD_FIXTURE_H_
#define FLEETPLAN_PLUGINS_SSH_SSHD_FIXTURE_H_

// A real OpenSSH server on 127.0.0.1 for tests: its own host key, its own
// authorized client key, a free port. Needs root (sshd's privilege
// separation) and tags = ["local"].

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tools/process/subprocess.h"

namespace fleetplan {

class LocalSshd {
 public:
  // Generates keys under `dir` and starts sshd; returns once it accepts
  // connections.
  static absl::StatusOr<std::unique_ptr<LocalSshd>> Start(const std::string& dir);

  int port() const { return port_; }
  // The private key sshd accepts for root.
  const std::string& client_key() const { return client_key_; }
  // The host key's known_hosts line and SHA256 fingerprint.
  std::string KnownHostsLine() const;
  const std::string& host_fingerprint() const { return host_fingerprint_; }

 private:
  LocalSshd() = default;

  std::unique_ptr<Subprocess> sshd_;
  int port_ = 0;
  std::string client_key_;
  std::string host_public_key_;  // "ssh-ed25519 AAAA..."
  std::string host_fingerprint_;
};

// Runs argv to completion; its output, or an error with the output.
absl::StatusOr<std::string> RunToCompletion(const std::vector<std::string>& argv);

// A fresh ed25519 key pair at `path` (and `path`.pub).
absl::Status MakeKeyPair(const std::string& path);

// A TCP port on 127.0.0.1 that nothing listens on right now.
int FreeLoopbackPort();

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SSH_SSHD_FIXTURE_H_
