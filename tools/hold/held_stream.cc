#include "tools/hold/held_stream.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/hold/unix_socket.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

class HeldStream : public CommandStream {
 public:
  explicit HeldStream(int fd) : socket_(fd) {}

  absl::Status Write(absl::string_view bytes) override {
    if (ended_) return absl::UnavailableError("the command's stream ended");
    return socket_.Write(EncodeFrame(FrameType::kData, {std::string(bytes)}));
  }

  absl::StatusOr<std::string> Read(absl::Duration timeout) override {
    absl::Time deadline = absl::Now() + timeout;
    std::string out;
    while (true) {
      // Every whole frame first: output, the hello, the end.
      while (!ended_) {
        absl::StatusOr<std::optional<Frame>> frame = reader_.Next();
        if (!frame.ok()) return absl::UnavailableError(frame.status().message());
        if (!frame->has_value()) break;
        Take(**frame, &out);
      }
      if (!out.empty()) return out;
      if (ended_) return absl::OutOfRangeError("the command's output ended");
      absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) return out;
      absl::StatusOr<std::string> bytes = socket_.Read(left);
      if (absl::IsOutOfRange(bytes.status())) {
        ended_ = true;
        continue;
      }
      if (!bytes.ok()) return bytes.status();
      reader_.Feed(*bytes);
    }
  }

  std::string ErrorOutput() override { return errors_; }

  // Bytes of the holder's wire as they are (the attach and the open).
  absl::Status SendFrames(const std::string& frames) { return socket_.Write(frames); }

 private:
  void Take(const Frame& frame, std::string* out) {
    if (frame.type == FrameType::kOutput && frame.fields.size() == 1) {
      out->append(frame.fields[0]);
    } else if (frame.type == FrameType::kHello) {
      // The attach's answer; the stream follows.
    } else if (frame.type == FrameType::kError) {
      errors_ = std::string(ParseStatusFrame(frame).message());
      ended_ = true;
    } else {
      if (frame.type == FrameType::kStatus && frame.fields.size() == 2) errors_ = frame.fields[1];
      ended_ = true;
    }
  }

  SocketStream socket_;
  FrameReader reader_;
  std::string errors_;
  bool ended_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CommandStream>> OpenHeldStream(const std::string& socket,
                                                              const HoldAttach& attach,
                                                              const std::string& command) {
  absl::StatusOr<int> fd = ConnectUnix(socket);
  if (!fd.ok()) return absl::UnavailableError(fd.status().message());
  auto stream = std::make_unique<HeldStream>(*fd);
  // The attach and the open leave together; the holder answers the first
  // before it reads the second.
  FP_RETURN_IF_ERROR(stream->SendFrames(
      absl::StrCat(EncodeAttach(attach), EncodeFrame(FrameType::kOpenStream, {command}))));
  return std::unique_ptr<CommandStream>(std::move(stream));
}

}  // namespace fleetplan
