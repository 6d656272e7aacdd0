#ifndef FLEETPLAN_PLUGINS_SSH_UPLOAD_WINDOW_H_
#define FLEETPLAN_PLUGINS_SSH_UPLOAD_WINDOW_H_

// The bound on what a pipelined upload has in flight: the requests sent
// but not yet answered, oldest first, and the bytes of file data they
// carry. Pure bookkeeping; SftpClient::Upload sends and reads.

#include <cstddef>
#include <cstdint>
#include <deque>

namespace fleetplan {

class UploadWindow {
 public:
  // One request awaiting its reply.
  struct Request {
    uint32_t id = 0;
    size_t upload = 0;  // index of the upload it belongs to
    size_t bytes = 0;   // of file data it carries
  };

  // At most `max_bytes` of data and `max_requests` requests in flight,
  // except that one request always fits into an empty window.
  UploadWindow(size_t max_bytes, size_t max_requests)
      : max_bytes_(max_bytes), max_requests_(max_requests) {}

  // True when a request carrying `bytes` must wait until the oldest one is
  // answered (TakeOldest).
  bool MustWaitFor(size_t bytes) const {
    return !requests_.empty() &&
           (bytes_ + bytes > max_bytes_ || requests_.size() >= max_requests_);
  }

  void Add(const Request& request) {
    requests_.push_back(request);
    bytes_ += request.bytes;
  }

  // Removes and returns the oldest request; the window must not be empty.
  Request TakeOldest() {
    Request oldest = requests_.front();
    requests_.pop_front();
    bytes_ -= oldest.bytes;
    return oldest;
  }

  bool empty() const { return requests_.empty(); }
  size_t bytes() const { return bytes_; }

 private:
  size_t max_bytes_;
  size_t max_requests_;
  std::deque<Request> requests_;
  size_t bytes_ = 0;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SSH_UPLOAD_WINDOW_H_
