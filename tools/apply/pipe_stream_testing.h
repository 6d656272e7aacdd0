#ifndef FLEETPLAN_TOOLS_APPLY_PIPE_STREAM_TESTING_H_
#define FLEETPLAN_TOOLS_APPLY_PIPE_STREAM_TESTING_H_

// For tests: a command on this machine as a transport's command stream, so
// that an apply session (or the connection holder's) talks to a real
// launch agent without a node.

#include <sys/types.h>

#include <string>

#include "plugins/transport.h"

namespace fleetplan {

// `/bin/sh -c command` with stdin and stdout pipes, stderr kept apart;
// closing it ends its stdin and waits for it.
class PipeStream : public CommandStream {
 public:
  explicit PipeStream(const std::string& command);
  ~PipeStream() override;
  absl::Status Write(absl::string_view bytes) override;
  absl::StatusOr<std::string> Read(absl::Duration timeout) override;
  std::string ErrorOutput() override { return errors_; }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1, stdout_ = -1, stderr_ = -1;
  std::string errors_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_PIPE_STREAM_TESTING_H_
