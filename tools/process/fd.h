#ifndef FLEETPLAN_TOOLS_PROCESS_FD_H_
#define FLEETPLAN_TOOLS_PROCESS_FD_H_

// A file descriptor closed when it goes out of scope.

#include <unistd.h>

#include <utility>

namespace fleetplan {

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(Fd&& other) : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) {
    std::swap(fd_, other.fd_);
    return *this;
  }
  int get() const { return fd_; }
  // Gives up ownership.
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROCESS_FD_H_
