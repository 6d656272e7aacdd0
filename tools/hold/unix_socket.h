#ifndef FLEETPLAN_TOOLS_HOLD_UNIX_SOCKET_H_
#define FLEETPLAN_TOOLS_HOLD_UNIX_SOCKET_H_

// The connection holder's unix socket: listening, connecting, who is on
// the other end, and a CommandStream over a connected socket.

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "plugins/transport.h"

namespace fleetplan {

// Binds and listens on `path` (mode 0600). AlreadyExists when something is
// there (another holder won the race); Internal otherwise.
absl::StatusOr<int> ListenUnix(const std::string& path);

// Connects to `path`. NotFound when nothing is there; Unavailable when
// nothing listens (a dead holder's socket); Internal otherwise.
absl::StatusOr<int> ConnectUnix(const std::string& path);

// PermissionDenied unless the process on the other end of `fd` runs as
// `uid` (SO_PEERCRED: what the kernel recorded when it connected).
absl::Status CheckPeerUid(int fd, uid_t uid);

// A connected socket as a CommandStream; closes it when destroyed. Write
// never raises SIGPIPE; Read returns OutOfRange once the other end closed.
class SocketStream : public CommandStream {
 public:
  explicit SocketStream(int fd) : fd_(fd) {}
  ~SocketStream() override;
  absl::Status Write(absl::string_view bytes) override;
  absl::StatusOr<std::string> Read(absl::Duration timeout) override;
  std::string ErrorOutput() override { return ""; }
  int fd() const { return fd_; }

 private:
  int fd_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_HOLD_UNIX_SOCKET_H_
