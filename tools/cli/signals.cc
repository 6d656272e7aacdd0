#include "tools/cli/signals.h"

#include <pthread.h>
#include <signal.h>

#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace fleetplan {
namespace {

class SignalWatcher {
 public:
  SignalWatcher() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    // Blocked before any other thread starts, so every thread inherits it.
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    std::thread([this] {
      int signal = 0;
      while (sigwait(&signals_, &signal) == 0) {
        absl::MutexLock lock(&mu_);
        if (handler_) handler_();
      }
    }).detach();
  }

  void Set(std::function<void()> handler) {
    absl::MutexLock lock(&mu_);
    handler_ = std::move(handler);
  }

 private:
  sigset_t signals_;
  absl::Mutex mu_;
  std::function<void()> handler_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

void OnInterrupt(std::function<void()> handler) {
  static SignalWatcher* watcher = new SignalWatcher();
  watcher->Set(std::move(handler));
}

}  // namespace fleetplan
