#include "tools/cli/dashboard_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "tools/apply/job_control.h"
#include "tools/cli/dashboard_api.h"
#include "tools/cli/dashboard_server.h"
#include "tools/cli/job_commands.h"
#include "tools/cli/signals.h"
#include "tools/cli/top_command.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {
namespace {

// How long the follower waits before it looks for a new run once the one
// it followed ended.
constexpr absl::Duration kRunCheckInterval = absl::Seconds(2);

// Follows the ranks' output as `logs --follow` does, on connections of its
// own (a Connection is used by one thread at a time), into a RunOutput;
// once the run ended, looks for a new one (another apply) every few
// seconds and follows that from its start.
class Follower {
 public:
  Follower(const OpenedTarget& target, RunOutput* output)
      : target_(target), output_(output), thread_([this] { Run(); }) {}
  ~Follower() {
    {
      absl::MutexLock lock(&mu_);
      ended_ = true;
      if (round_ != nullptr && !round_->HasBeenNotified()) round_->Notify();
    }
    end_.Notify();
    thread_.join();
  }

 private:
  void Run() {
    std::string followed;  // the run followed to its end
    while (!end_.HasBeenNotified()) {
      JobControl control(target_.spec, target_.connections.open);
      std::optional<NodeJobState> chief = control.ChiefState();
      std::string run_id = chief.has_value() ? chief->run_id : "";
      if (!run_id.empty() && run_id != followed) {
        if (FollowRun(control, run_id)) followed = run_id;
      }
      end_.WaitForNotificationWithTimeout(kRunCheckInterval);
    }
  }

  // Follows `run_id` from its start; true when it was followed to the
  // job's end.
  bool FollowRun(const JobControl& control, const std::string& run_id) {
    absl::Notification round;
    {
      absl::MutexLock lock(&mu_);
      if (ended_) return false;
      round_ = &round;
    }
    output_->Reset(run_id);
    LogsRequest request;
    request.run_id = run_id;
    request.follow = true;
    std::vector<const NodeSpec*> nodes;
    for (const NodeSpec& node : target_.spec.nodes) {
      if (target_.connections.open.count(node.name) > 0) nodes.push_back(&node);
    }
    JobControl::LogsCallbacks callbacks;
    callbacks.on_line = [this](const NodeSpec& node, absl::string_view line) {
      output_->Add(node.name, line);
    };
    callbacks.cancel_for = [&round](const NodeSpec&) { return &round; };
    JobControl::Followed followed = control.Follow(request, nodes, callbacks, [this] {
      absl::MutexLock lock(&mu_);
      if (!round_->HasBeenNotified()) round_->Notify();
    });
    absl::MutexLock lock(&mu_);
    round_ = nullptr;
    return followed.chief_to_the_end && !ended_;
  }

  const OpenedTarget& target_;
  RunOutput* output_;
  absl::Notification end_;
  absl::Mutex mu_;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  absl::Notification* round_ ABSL_GUARDED_BY(mu_) = nullptr;  // cancels the current follow
  std::thread thread_;  // last: starts once the rest is made
};

// The endpoints' actions on connections of their own, one request at a
// time (the page asks every 2 s; a stop waits for a top in flight).
class JobBackend : public DashboardBackend {
 public:
  JobBackend(const OpenedTarget& target, absl::Duration lock_timeout)
      : target_(target), lock_timeout_(lock_timeout) {}

  nlohmann::json Top() override {
    absl::MutexLock lock(&mu_);
    return TopPageJson(ReadTopView(target_, nullptr));
  }
  nlohmann::json Stop() override {
    absl::MutexLock lock(&mu_);
    return StopJson(target_.spec, StopJob(target_, lock_timeout_));
  }
  const RunOutput& output() const override { return output_; }
  RunOutput* mutable_output() { return &output_; }

 private:
  const OpenedTarget& target_;
  const absl::Duration lock_timeout_;
  absl::Mutex mu_;
  RunOutput output_;
};

}  // namespace

int RunDashboardCommand(const JobTarget& target, const DashboardOptions& options) {
  OnInterrupt(nullptr);  // signals blocked before any thread starts
  absl::StatusOr<std::string> token = NewDashboardToken();
  if (!token.ok()) return FailWith("dashboard", token.status());
  absl::StatusOr<std::unique_ptr<OpenedTarget>> asking = OpenTarget(target);
  if (!asking.ok()) return FailWith("dashboard", asking.status());
  absl::StatusOr<std::unique_ptr<OpenedTarget>> following = OpenTarget(target);
  if (!following.ok()) return FailWith("dashboard", following.status());
  JobBackend backend(**asking, target.lock_timeout);
  absl::StatusOr<std::unique_ptr<DashboardServer>> server =
      DashboardServer::Start(&backend, options.port, *token);
  if (!server.ok()) return FailWith("dashboard", server.status());
  absl::Notification interrupted;
  OnInterrupt([&interrupted] {
    if (!interrupted.HasBeenNotified()) interrupted.Notify();
  });
  {
    Follower follower(**following, backend.mutable_output());
    std::printf("dashboard of %s: %s\n(only this machine can reach it; Ctrl-C ends it, the job "
                "runs on)\n",
                target.spec.c_str(), (*server)->url().c_str());
    std::fflush(stdout);
    interrupted.WaitForNotification();
  }
  server->reset();
  OnInterrupt(nullptr);
  return kExitInterrupted;
}

namespace {

// The server program links this file (alwayslink): its `dashboard` serves
// here instead of running the program.
const bool kRegistered = RegisterDashboardServer(RunDashboardCommand);

}  // namespace

}  // namespace fleetplan
