#include "tools/cli/top_command.h"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "tools/apply/job_control.h"
#include "tools/cli/signals.h"
#include "tools/cli/terminal_screen.h"
#include "tools/cli/top_view.h"
#include "tools/protocol/top_report.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {
namespace {

// How `top` ends: `q` (0) or an interrupt (130). Once it has, the wait
// between refreshes and the nodes' commands end at once.
class Ending {
 public:
  void Set(int code) {
    absl::MutexLock lock(&mu_);
    if (done_.HasBeenNotified()) return;
    code_ = code;
    done_.Notify();
  }
  bool ended() const { return done_.HasBeenNotified(); }
  int code() const {
    absl::MutexLock lock(&mu_);
    return code_;
  }
  const absl::Notification* notification() const { return &done_; }
  // True when it ended within `timeout`.
  bool WaitFor(absl::Duration timeout) const {
    return done_.WaitForNotificationWithTimeout(timeout);
  }

 private:
  mutable absl::Mutex mu_;
  absl::Notification done_;
  int code_ ABSL_GUARDED_BY(mu_) = 0;
};

// The full-screen view and the thread that reads its keys.
class LiveScreen {
 public:
  LiveScreen(std::unique_ptr<TerminalScreen> screen, Ending* ending)
      : screen_(std::move(screen)), keys_([this, ending] {
          while (!ending->ended()) {
            std::optional<char> key = screen_->ReadKey(absl::Milliseconds(100));
            if (key == 'q' || key == 'Q') ending->Set(kExitOk);
          }
        }) {}
  // The ending must have been set: the key thread ends with it.
  ~LiveScreen() { keys_.join(); }

  void Draw(const std::vector<std::string>& lines) { screen_->Draw(lines); }

 private:
  std::unique_ptr<TerminalScreen> screen_;
  std::thread keys_;
};

// Shows one refresh as the options ask.
void Show(const TopView& view, const JobTarget& target, const TopOptions& options,
          LiveScreen* live, bool first) {
  if (target.json) {
    for (const auto& [node, why] : view.unread) {
      std::fprintf(stderr, "top: node '%s': %s\n", node.c_str(), why.c_str());
    }
    std::printf("%s\n", TopReportToJson(view.report).c_str());
    std::fflush(stdout);
    return;
  }
  FrameOptions frame;
  frame.spec = target.spec;
  frame.now = absl::Now();
  frame.zone = absl::LocalTimeZone();
  frame.color = options.color;
  frame.live = live != nullptr;
  std::vector<std::string> lines = RenderTopFrame(view, frame);
  if (live != nullptr) {
    live->Draw(lines);
    return;
  }
  std::printf("%s%s\n", first ? "" : "\n", absl::StrJoin(lines, "\n").c_str());
  std::fflush(stdout);
}

}  // namespace

TopView ReadTopView(const OpenedTarget& opened, const absl::Notification* cancel) {
  const ClusterSpec& spec = opened.spec;
  std::vector<std::string> names;
  for (const NodeSpec& node : spec.nodes) names.push_back(node.name);
  const size_t chief = &spec.chief() - spec.nodes.data();  // chief() is one of nodes
  TopView view = GatherTop(names, chief, JobControl(spec, opened.connections.open).Top(cancel));
  for (const auto& [node, why] : opened.connections.unreachable) {
    view.unread[node] = absl::StrCat("unreachable: ", why);
  }
  return view;
}

int RunTopCommand(const JobTarget& target, const TopOptions& options) {
  OnInterrupt(nullptr);  // signals blocked before any thread starts
  absl::StatusOr<std::unique_ptr<OpenedTarget>> opened = OpenTarget(target);
  if (!opened.ok()) return FailWith("top", opened.status());
  Ending ending;
  OnInterrupt([&ending] { ending.Set(kExitInterrupted); });
  std::unique_ptr<LiveScreen> live;
  if (options.screen && !options.once && !target.json) {
    absl::StatusOr<std::unique_ptr<TerminalScreen>> screen =
        TerminalScreen::Open(STDIN_FILENO, STDOUT_FILENO);
    if (screen.ok()) live = std::make_unique<LiveScreen>(*std::move(screen), &ending);
  }
  bool failed = false;
  for (bool first = true; !ending.ended(); first = false) {
    absl::Time started = absl::Now();
    TopView view = ReadTopView(**opened, ending.notification());
    if (ending.ended()) break;
    Show(view, target, options, live.get(), first);
    failed = false;
    for (const auto& [node, why] : view.unread) {
      failed |= (*opened)->connections.open.count(node) > 0;  // not there: nothing to read
    }
    if (options.once || ending.WaitFor(options.interval - (absl::Now() - started))) break;
  }
  int code = ending.ended() ? ending.code() : (failed ? kExitApplyFailed : kExitOk);
  ending.Set(kExitOk);  // ends the key thread
  live.reset();         // the terminal as it was
  OnInterrupt(nullptr);
  return code;
}

}  // namespace fleetplan
