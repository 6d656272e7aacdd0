#ifndef FLEETPLAN_TOOLS_PROTOCOL_SESSION_WIRE_H_
#define FLEETPLAN_TOOLS_PROTOCOL_SESSION_WIRE_H_

// The framing of an apply session: apply talks to the launch agent already
// on a node (`fleetplan-agent session`) over one command's stdin and
// stdout, instead of starting a program on the node for every read, write,
// check and launch. Every message is a frame: one type byte, the payload's
// length (4 bytes, big-endian), then the payload, a list of fields, each its
// length (4 bytes, big-endian) and its bytes. Both sides link this.
//
//   agent → apply, first: hello {kSessionGreeting}
//   read {path...}                 → contents {("ok"|"missing"|"error", text)...}
//   write {path, mode, content}    → ok | error {message}
//   put {root, count}, then count × (file {path, mode, size}, data {bytes}...)
//                                  → ok | error {message}
//   remove {root, path...}         → ok | error {message}
//   run {command, cwd, hold_stdin, stdin_grace_ms, term_grace_ms, NAME=VALUE...}
//       → output {bytes}... then status {exit status};
//         apply may send cancel {} meanwhile (stdin closed, then TERM, KILL)
//   verify {root, manifest, record path, record content}
//                                  → output {what it found}, status {0|1|2}
//   workdir {workdir, state folder, bytes}
//                                  → output {check line}, status {0|1}
//
// The requests and the read's answer are typed over these frames in
// session_message.h. A request's paths are absolute (put and remove:
// relative to their root, and kept under it). The session ends when apply closes stdin, or after
// kSessionIdleTimeout without a request while no command runs: apply may be
// gone without a word (a node cut off the network never sees the end of
// its input), and an agent must not wait there for ever. Apply starts a
// fresh agent when its session was idle for half that.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fleetplan {

// What the agent says first; another text (an agent of another version)
// means apply keeps to its commands.
inline constexpr char kSessionGreeting[] = "fleetplan-apply-session 1";

inline constexpr absl::Duration kSessionIdleTimeout = absl::Seconds(3);

// The largest frame either side accepts; files go in data frames of at
// most kSessionChunk bytes.
inline constexpr uint32_t kMaxSessionFrame = 8u << 20;
inline constexpr size_t kSessionChunk = 1u << 20;

enum class FrameType : char {
  kHello = 'H',
  kRead = 'R',
  kWrite = 'W',
  kPut = 'P',
  kFile = 'F',
  kData = 'D',
  kRemove = 'X',
  kRun = 'C',
  kCancel = 'c',
  kVerify = 'V',
  kWorkdir = 'K',
  kOutput = 'o',
  kStatus = 's',
  kOk = 'k',
  kError = 'e',
  kContents = 'r',
  // The connection holder's (tools/protocol/hold_wire.h).
  kAttach = 'A',
  kOpenStream = 'O',
  kQuit = 'Q',
};

struct Frame {
  FrameType type = FrameType::kOk;
  std::vector<std::string> fields;
};

// The bytes of one frame.
std::string EncodeFrame(FrameType type, const std::vector<std::string>& fields = {});

// Cuts a byte stream into frames. Feed it what arrives, then take frames
// while Next returns one.
class FrameReader {
 public:
  void Feed(absl::string_view bytes) { buffer_.append(bytes.data(), bytes.size()); }
  // The next whole frame; nullopt while it has not all arrived. DataLoss
  // for a frame larger than kMaxSessionFrame or whose fields do not add up
  // to its length (the stream is broken: nothing after it can be trusted).
  absl::StatusOr<std::optional<Frame>> Next();
  // Bytes received and not yet taken as frames.
  size_t pending() const { return buffer_.size() - offset_; }

 private:
  std::string buffer_;
  size_t offset_ = 0;
};

// Field `index` of `frame` as a number; InvalidArgument naming `what` when
// missing or not a number.
absl::StatusOr<uint64_t> FrameNumber(const Frame& frame, size_t index, absl::string_view what);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_SESSION_WIRE_H_
