#ifndef FLEETPLAN_TOOLS_PROTOCOL_SESSION_MESSAGE_H_
#define FLEETPLAN_TOOLS_PROTOCOL_SESSION_MESSAGE_H_

// The apply session's requests and the answer to a read, typed once over
// its frames (session_wire.h): apply writes them, the agent and the
// connection holder read them, and no side reads a field by its position.
// A frame of another shape (a field missing or not a number) is refused
// as InvalidArgument naming the request.

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/protocol/session_wire.h"

namespace fleetplan {

// read {path...} → contents
struct ReadRequest {
  std::vector<std::string> paths;
};

// write {path, mode, content} → ok | error: temporary name, mode, rename.
struct WriteRequest {
  std::string path;
  uint32_t mode = 0644;
  std::string content;
};

// put {root, count}, then `count` files, each a PutFileHeader and its
// data frames (at most kSessionChunk bytes each) → ok | error.
struct PutRequest {
  std::string root;
  uint64_t count = 0;
};

// file {path, mode, size}: one file of a put, `path` relative to the root.
// An empty path with size 0 is a file apply could not read (the put fails).
struct PutFileHeader {
  std::string path;
  uint32_t mode = 0644;
  uint64_t size = 0;
};

// remove {root, path...} → ok | error; paths relative to the root.
struct RemoveRequest {
  std::string root;
  std::vector<std::string> paths;
};

// run {command, cwd, hold_stdin, stdin_grace_ms, term_grace_ms, NAME=VALUE...}
// → output {bytes}... then status {exit status}; a cancel {} meanwhile
// closes its stdin, then TERM after the stdin grace (when it holds stdin),
// then KILL after the term grace.
struct RunRequest {
  std::string command;  // run by /bin/sh -c
  std::string cwd;      // empty: the agent's
  bool hold_stdin = false;
  absl::Duration stdin_grace = absl::ZeroDuration();
  absl::Duration term_grace = absl::Seconds(5);
  std::vector<std::pair<std::string, std::string>> env;
};

// verify {root, manifest, record path, record} → output, status {0|1|2}:
// the tree check after a sync, and the step's record once it passed.
struct VerifyRequest {
  std::string root;
  std::string manifest;
  std::string record_path;  // empty: nothing recorded
  std::string record;
};

// workdir {workdir, state folder, bytes} → output {check line}, status:
// the workdir check before a sync.
struct WorkdirRequest {
  std::string workdir;
  std::string state_dir;
  uint64_t bytes = 0;
};

using SessionRequest = std::variant<ReadRequest, WriteRequest, PutRequest, RemoveRequest,
                                    RunRequest, VerifyRequest, WorkdirRequest>;

// One file of a contents answer.
struct FileContent {
  enum class Kind { kOk, kMissing, kError };
  Kind kind = Kind::kOk;
  std::string text;  // the content, or why not
};

// contents {(ok|missing|error, text)...}: one per path read, in order.
struct ContentsAnswer {
  std::vector<FileContent> files;
};

// The frame's bytes of each.
std::string EncodeSessionRequest(const SessionRequest& request);
std::string EncodePutFileHeader(const PutFileHeader& header);
std::string EncodeContents(const ContentsAnswer& answer);

// The request `frame` carries. InvalidArgument for a frame that is not a
// request, or a request of another shape.
absl::StatusOr<SessionRequest> ParseSessionRequest(const Frame& frame);
absl::StatusOr<PutFileHeader> ParsePutFileHeader(const Frame& frame);
absl::StatusOr<ContentsAnswer> ParseContents(const Frame& frame);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_SESSION_MESSAGE_H_
