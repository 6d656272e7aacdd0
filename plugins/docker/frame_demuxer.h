#ifndef FLEETPLAN_PLUGINS_DOCKER_FRAME_DEMUXER_H_
#define FLEETPLAN_PLUGINS_DOCKER_FRAME_DEMUXER_H_

// Docker's multiplexed stream (exec and attach without a TTY): frames of an
// 8-byte header {stream, 0, 0, 0, size as big-endian uint32} and `size`
// bytes of payload. Bytes arrive in arbitrary pieces; this reassembles them.

#include <cstdint>
#include <functional>
#include <string>

#include "absl/strings/string_view.h"

namespace fleetplan {

class FrameDemuxer {
 public:
  // stream: 0 stdin, 1 stdout, 2 stderr.
  using Sink = std::function<void(int stream, absl::string_view payload)>;

  explicit FrameDemuxer(Sink sink) : sink_(std::move(sink)) {}

  // Consumes `bytes`; payload reaches the sink as soon as it arrives, a
  // frame's payload possibly in several pieces.
  void Feed(absl::string_view bytes);

  // True when the stream ended inside a frame header or payload.
  bool InsideFrame() const { return header_.size() > 0 || remaining_ > 0; }

 private:
  Sink sink_;
  std::string header_;      // partial header, < 8 bytes
  int stream_ = 0;          // of the current frame
  uint32_t remaining_ = 0;  // payload bytes still to come
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_DOCKER_FRAME_DEMUXER_H_
