#ifndef FLEETPLAN_TOOLS_AGENT_PEER_CHANNEL_H_
#define FLEETPLAN_TOOLS_AGENT_PEER_CHANNEL_H_

// One connection between two launch agents (a worker and the job's
// coordinator): JSON objects, one per line, over a non-blocking TCP
// socket. It remembers when it last heard anything, which is how either
// side tells that the other has gone silent.

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "tools/agent/sockets.h"

namespace fleetplan {

class PeerChannel {
 public:
  // Takes `fd` (a connected socket), makes it non-blocking with
  // TCP_NODELAY; `now` counts as heard.
  PeerChannel(Fd fd, absl::Time now);

  int fd() const { return fd_.get(); }
  // True after end-of-file or an error on the socket.
  bool closed() const { return closed_; }
  absl::Time last_heard() const { return last_heard_; }
  // Who is on the other side, once known (a worker's hello names it).
  std::string peer;

  // Queues `message` and writes what the socket takes now.
  void Send(const nlohmann::json& message);
  // Writes queued bytes for up to `wait` (the last orders before exit).
  void Flush(absl::Duration wait);
  // Reads what is available (call when poll says readable) and returns
  // the complete messages; a line that is not a JSON object closes the
  // channel.
  std::vector<nlohmann::json> Receive(absl::Time now);

 private:
  void WriteQueued();

  Fd fd_;
  bool closed_ = false;
  absl::Time last_heard_;
  std::string in_;
  std::string out_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_PEER_CHANNEL_H_
