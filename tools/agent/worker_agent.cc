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

}  // namespace

absl::Status WorkerAgent::SetUp(absl::Time now) {
  state_.run_id = options_.run_id;
  if (!state_.run_id.empty()) {
    FP_ASSIGN_OR_RETURN(run_dir_, CreateRunDir(options_.log_dir, state_.run_id));
  } else {
    FP_RETURN_IF_ERROR(MakeDirs(options_.log_dir));
  }
  WriteState(now);
  FP_ASSIGN_OR_RETURN(endpoint_, TlsEndpoint::Make(TlsEndpoint::Side::kClient,
                                                   *options_.job_key, kSupervisionPurpose));
  absl::Status reached = ConnectToCoordinator(now + options_.heartbeat_timeout);
  if (!reached.ok()) {
    coordinator_.reset();
    Finish(JobPhase::kFailed,
           JobFailure{options_.node, -1, 1,
                      absl::StrCat("cannot reach the coordinator: ", reached.message())},
           1);
    return absl::OkStatus();
  }
  coordinator_->Send(HelloMessage{options_.node});
  return absl::OkStatus();
}

absl::Status WorkerAgent::ConnectToCoordinator(absl::Time deadline) {
  absl::Status last = absl::UnavailableError("no attempt");
  do {
    absl::StatusOr<Connected> connected =
        ConnectWithRetry(options_.coordinator, deadline - absl::Now());
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
                   if (!stop_requested()) StartGeneration(start.generation, start.why);
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
  if (state_.run_id.empty()) {
    state_.run_id = welcome.run_id;
    absl::StatusOr<std::string> run_dir = CreateRunDir(options_.log_dir, state_.run_id);
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
  if (coordinator_ == nullptr) return;
  state_.last_heartbeat = coordinator_->last_heard();
  std::string lost;
  if (coordinator_->closed()) {
    lost = "its connection closed";
  } else if (now - coordinator_->last_heard() > options_.heartbeat_timeout) {
    lost = absl::StrCat("no heartbeat for ", absl::FormatDuration(options_.heartbeat_timeout));
  }
  if (lost.empty()) return;
  StopLocalRanks();
  if (stop_requested()) {
    Finish(JobPhase::kStopped, std::nullopt, 128 + 15);
    return;
  }
  Say(absl::StrCat("lost the coordinator (", lost, "); stopped this node's ranks"));
  std::string who = coordinator_node_.empty() ? options_.coordinator : coordinator_node_;
  Finish(JobPhase::kFailed,
         JobFailure{who, -1, 1,
                    absl::StrCat("lost the coordinator from node '", options_.node, "': ", lost)},
         1);
}

// A stopped worker waits a moment for the coordinator's word, then ends.
void WorkerAgent::Decide(absl::Time now) {
  if (stop_requested() && now - *stop_requested_at_ > kLastWords) {
    Finish(JobPhase::kStopped, std::nullopt, 128 + 15);
  }
}

}  // namespace fleetplan
