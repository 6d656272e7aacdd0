#include "tools/hold/holder.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "tools/hold/hold_server.h"
#include "tools/hold/unix_socket.h"

namespace fleetplan {
namespace {

// How often the holder looks at the clock and at its socket's path.
constexpr int kTickMs = 200;

ino_t InodeOf(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 ? info.st_ino : 0;
}

// The holder's count of attached commands and when the last one left.
class Attached {
 public:
  void Enter() {
    absl::MutexLock lock(&mu_);
    ++count_;
  }
  void Leave() {
    absl::MutexLock lock(&mu_);
    --count_;
    since_ = absl::Now();
  }
  // Idle for `persist` with nothing attached.
  bool IdleFor(absl::Duration persist) const {
    absl::MutexLock lock(&mu_);
    return count_ == 0 && absl::Now() - since_ >= persist;
  }

 private:
  mutable absl::Mutex mu_;
  int count_ = 0;
  absl::Time since_ = absl::Now();
};

}  // namespace

absl::Status RunHolder(const HolderOptions& options) {
  signal(SIGPIPE, SIG_IGN);  // a command or node gone mid-write is an error, not the end
  const std::string socket_path = HoldSocketPath(options.folder, options.set.Identity());
  absl::StatusOr<int> listening = ListenUnix(socket_path);
  if (!listening.ok()) return listening.status();
  const ino_t mine = InodeOf(socket_path);
  HeldAgentOptions agent;
  agent.persist = options.set.Persist();
  NodePool pool(options.open, agent);
  HoldServer server(options.set, pool, options.folder, geteuid());
  Attached attached;
  std::atomic<bool> quit{false};
  const absl::Duration persist = options.set.Persist();
  std::fprintf(stderr, "fleetplan hold: pid %d holds %zu node(s) at %s for %s idle\n", getpid(),
               options.set.nodes.size(), socket_path.c_str(),
               absl::FormatDuration(persist).c_str());
  while (!quit.load()) {
    // Replaced (a command took this one for dead) or removed: nobody new can
    // reach this holder; it leaves once its commands did.
    bool orphaned = InodeOf(socket_path) != mine;
    if (attached.IdleFor(orphaned ? absl::ZeroDuration() : persist)) break;
    pollfd ready{*listening, POLLIN, 0};
    if (poll(&ready, 1, kTickMs) <= 0) continue;
    int client = accept4(*listening, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    attached.Enter();
    std::thread([&server, &attached, &quit, client] {
      if (server.Serve(client)) quit = true;
      attached.Leave();
    }).detach();
  }
  if (InodeOf(socket_path) == mine) unlink(socket_path.c_str());
  close(*listening);
  std::fprintf(stderr, "fleetplan hold: pid %d ends (%s, %d connection(s) opened)\n", getpid(),
               quit.load() ? "asked to" : "idle", pool.opened());
  // A quit may leave commands attached: their threads must not outlive
  // what they use, so the process ends here, its connections with it.
  std::fflush(stderr);
  std::_Exit(0);
}

}  // namespace fleetplan
