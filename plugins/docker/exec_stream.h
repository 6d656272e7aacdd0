#ifndef FLEETPLAN_PLUGINS_DOCKER_EXEC_STREAM_H_
#define FLEETPLAN_PLUGINS_DOCKER_EXEC_STREAM_H_

// The streaming half of a Docker exec: POST /exec/{id}/start upgraded to a
// raw, bidirectional connection (libcurl CURLOPT_CONNECT_ONLY, then
// curl_easy_send / curl_easy_recv). Output arrives as multiplexed frames
// (no TTY); closing our write side is the process's end of stdin.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "plugins/docker/docker_client.h"
#include "plugins/docker/frame_demuxer.h"
#include "plugins/transport.h"

namespace fleetplan {

struct CurlApi;

class ExecStream {
 public:
  // Starts exec `exec_id` (created with AttachStdout/AttachStderr, Tty
  // false). `node` names the container in errors. FailedPrecondition when
  // no daemon answers, Unavailable when the start is refused.
  static absl::StatusOr<std::unique_ptr<ExecStream>> Start(
      const DockerClient& client, const std::string& exec_id,
      const std::string& node);

  ~ExecStream();
  ExecStream(const ExecStream&) = delete;
  ExecStream& operator=(const ExecStream&) = delete;

  // Waits up to `timeout` for output and passes what arrived (stdout and
  // stderr alike) to `on_output`. Returns true once the stream has ended,
  // which is when the process and everything holding its output are done.
  // Unavailable when the connection breaks.
  absl::StatusOr<bool> Pump(absl::Duration timeout,
                            const OutputCallback& on_output);

  // Shuts down our write side: the process reads end-of-file on stdin.
  void CloseStdin();

 private:
  ExecStream(const CurlApi* api, void* curl, int fd, std::string node);

  const CurlApi* api_;  // libcurl, loaded
  void* curl_;          // CURL*
  int fd_;
  std::string node_;
  std::string early_;  // stream bytes that came with the response headers
  const OutputCallback* on_output_ = nullptr;  // of the current Pump
  FrameDemuxer demuxer_;
  bool stdin_closed_ = false;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_DOCKER_EXEC_STREAM_H_
