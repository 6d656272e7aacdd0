#include "tools/agent/worker_agent.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/agent/sockets.h"
#include "tools/process/files.h"
#include "tools/util/overloaded.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

// How long the connection to the coordinator may take to prove the job's
// key, per attempt.
constexpr absl::Duration kHandshakeTimeout = absl::Seconds(10);

// Between two attempts to rejoin, and the most one attempt takes.
constexpr absl::Duration kRejoinPause = absl::Seconds(1);

}  // namespace

absl::Status WorkerAgent::SetUp(absl::Time now) {
  state_.run_id = request_.run_id;
  if (!state_.run_id.empty()) {
    FP_ASSIGN_OR_RETURN(run_dir_, CreateRunDir(request_.log_dir, state_.run_id));
  } else {
    FP_RETURN_IF_ERROR(MakeDirs(request_.log_dir));
  }
  WriteState(now);
  FP_ASSIGN_OR_RETURN(endpoint_, TlsEndpoint::Make(TlsEndpoint::Side::kClient,
                                                   *options_.job_key, kSupervisionPurpose));
  absl::Status reached = ConnectToCoordinator(now + request_.supervision.heartbeat_timeout);
  if (!reached.ok()) {
    coordinator_.reset();
    Finish(JobPhase::kFailed,
           JobFailure{request_.node, -1, 1,
                      absl::StrCat("cannot reach the coordinator: ", reached.message())},
           1);
    return absl::OkStatus();
  }
  coordinator_->Send(HelloMessage{request_.node, request_.nproc});
  return absl::OkStatus();
}

absl::Status WorkerAgent::ConnectToCoordinator(absl::Time deadline) {
  absl::Status last = absl::UnavailableError("no attempt");
  do {
    absl::StatusOr<Connected> connected =
        ConnectWithRetry(request_.supervision.coordinator, deadline - absl::Now());
    if (!connected.ok()) return connected.status();
    coordinator_ = std::make_unique<PeerChannel>(std::move(connected->fd), endpoint_, absl::Now());
    last = coordinator_->HandshakeBy(std::min(deadline, absl::Now() + kHandshakeTimeout));
    if (last.ok()) return last;
    last = absl::Status(last.code(), absl::StrCat(connected->address, ": ", last.message()));
    absl::SleepFor(absl::Milliseconds(100));
  } while (absl::Now() < deadline);
  return last;
}

std::vector<PeerChannel*> WorkerAgent::Channels() {
  if (coordinator_ == nullptr) return {};
  return {coordinator_.get()};
}

void WorkerAgent::Tell(const PeerMessage& message) {
  if (coordinator_ != nullptr) coordinator_->Send(message);
}

// What the coordinator may say; the rest is not for a worker.
void WorkerAgent::Handle(PeerChannel&, const PeerMessage& message) {
  std::visit(Overloaded{
                 [&](const WelcomeMessage& welcome) { Welcome(welcome); },
                 [&](const StartMessage& start) {
                   if (!stop_requested()) {
                     StartGeneration(start.generation, start.why, start.members);
                   }
                 },
                 [&](const StopMessage& stop) {
                   if (stop.generation == state_.generation) StopLocalRanks();
                 },
                 [&](const CollectStacksMessage& collect) { CollectStacks(collect.generation); },
                 [&](const EndMessage& end) { Finish(end.phase, end.failure, end.exit_status); },
                 [](const auto&) {},
             },
             message);
}

void WorkerAgent::Welcome(const WelcomeMessage& welcome) {
  coordinator_node_ = welcome.node;
  if (rejoin_until_.has_value()) {
    // Back in the job: on standby until a generation takes this node in.
    Say("rejoined the job; waiting for the next generation");
    rejoin_until_.reset();
    state_.waiting = "spare";
  }
  if (state_.run_id.empty()) {
    state_.run_id = welcome.run_id;
    absl::StatusOr<std::string> run_dir = CreateRunDir(request_.log_dir, state_.run_id);
    if (!run_dir.ok()) {
      Say(std::string(run_dir.status().message()));
      RequestStop("cannot keep logs");
      return;
    }
    run_dir_ = *run_dir;
  }
  MarkDirty();
}

// A worker stops its own ranks at once (the coordinator may be out of
// reach) and tells the coordinator, which stops the others.
void WorkerAgent::StopAsked() {
  Tell(StopMessage{});
  StopLocalRanks();
}

void WorkerAgent::RanksStarted(int generation) {
  state_.phase = JobPhase::kRunning;
  Tell(StartedMessage{generation});
}

void WorkerAgent::RanksEnded(const std::map<int, int>& statuses,
                             const std::map<int, int>& failed,
                             const std::optional<RankError>& error) {
  Tell(EndedMessage{state_.generation, statuses, failed, error});
}

void WorkerAgent::RanksProgressed(absl::Time) { Tell(ProgressMessage{state_.generation}); }

void WorkerAgent::StacksCollected(int generation, std::vector<RankStack> ranks) {
  Tell(StacksMessage{generation, std::move(ranks)});
}

void WorkerAgent::CheckPeers(absl::Time now) {
  if (coordinator_ == nullptr) {
    TryRejoin(now);
    return;
  }
  state_.last_heartbeat = coordinator_->last_heard();
  std::string lost;
  if (coordinator_->closed()) {
    lost = "its connection closed";
  } else if (now - coordinator_->last_heard() > request_.supervision.heartbeat_timeout) {
    lost = absl::StrCat("no heartbeat for ",
                        absl::FormatDuration(request_.supervision.heartbeat_timeout));
  }
  if (lost.empty()) return;
  StopLocalRanks();
  if (stop_requested()) {
    Finish(JobPhase::kStopped, std::nullopt, 128 + 15);
    return;
  }
  if (options_.rejoin_window > absl::ZeroDuration() && !coordinator_node_.empty()) {
    // An elastic job goes on without this node: stop, then try to rejoin.
    coordinator_.reset();
    if (!rejoin_until_.has_value()) {
      Say(absl::StrCat("lost the coordinator (", lost, "); stopped this node's ranks; trying to "
                       "rejoin for ", absl::FormatDuration(options_.rejoin_window)));
      rejoin_until_ = now + options_.rejoin_window;
      lost_why_ = lost;
    }
    state_.waiting = "rejoining";
    MarkDirty();
    return;
  }
  Say(absl::StrCat("lost the coordinator (", lost, "); stopped this node's ranks"));
  FailLost(lost);
}

void WorkerAgent::FailLost(const std::string& lost) {
  std::string who =
      coordinator_node_.empty() ? request_.supervision.coordinator : coordinator_node_;
  Finish(JobPhase::kFailed,
         JobFailure{who, -1, 1,
                    absl::StrCat("lost the coordinator from node '", request_.node, "': ", lost)},
         1);
}

// One attempt a second, each bounded, until the window closes; a stop
// asked for meanwhile ends the agent (Decide).
void WorkerAgent::TryRejoin(absl::Time now) {
  if (!rejoin_until_.has_value() || stop_requested() || now < next_attempt_) return;
  if (now >= *rejoin_until_) {
    FailLost(absl::StrCat(lost_why_, ", and it could not rejoin within ",
                          absl::FormatDuration(options_.rejoin_window)));
    return;
  }
  next_attempt_ = now + kRejoinPause;
  if (!ConnectToCoordinator(now + kRejoinPause).ok()) {
    coordinator_.reset();
    return;
  }
  coordinator_->Send(HelloMessage{request_.node, request_.nproc});
}

// A stopped worker waits a moment for the coordinator's word, then ends.
void WorkerAgent::Decide(absl::Time now) {
  if (stop_requested() && now - *stop_requested_at_ > kLastWords) {
    Finish(JobPhase::kStopped, std::nullopt, 128 + 15);
  }
}

}  // namespace fleetplan
