#include "tools/agent/coordinator_agent.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/agent/unproven_admission.h"
#include "tools/util/overloaded.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

// How long a connection to the coordinator may take to prove the job's
// key (how many may be trying at once: unproven_admission.h).
constexpr absl::Duration kHandshakeTimeout = absl::Seconds(10);

}  // namespace

absl::Status CoordinatorAgent::SetUp(absl::Time now) {
  JobCoordinator::Options job;
  job.nodes = request_.supervision.nodes.empty() ? std::vector<std::string>{request_.node}
                                                 : request_.supervision.nodes;
  job.max_restarts = request_.restarts;
  job.join_timeout = request_.supervision.heartbeat_timeout;
  job.restart_backoff = options_.restart_backoff;
  job.hang_timeout = request_.hang_timeout;
  // The stack tools' own timeout, and a margin for the message.
  job.collect_timeout = options_.stack_tools.tool_timeout * 2 + absl::Seconds(10);
  job.elastic = request_.supervision.elastic;
  if (job.nodes.size() > 1) {
    int fd = BindAnyAddress(request_.supervision.supervisor_port);
    if (fd < 0) {
      return absl::UnavailableError(absl::StrCat("cannot listen on supervisor port ",
                                                 request_.supervision.supervisor_port, ": ",
                                                 std::strerror(-fd)));
    }
    listener_ = Fd(fd);
    FP_ASSIGN_OR_RETURN(endpoint_, TlsEndpoint::Make(TlsEndpoint::Side::kServer,
                                                     *options_.job_key, kSupervisionPurpose));
  }
  job_ = std::make_unique<JobCoordinator>(job, now);
  state_.run_id = request_.run_id.empty() ? MakeRunId(now, getpid()) : request_.run_id;
  FP_ASSIGN_OR_RETURN(run_dir_, CreateRunDir(request_.log_dir, state_.run_id));
  job_->Joined(request_.node, request_.nproc);
  WriteState(now);
  return absl::OkStatus();
}

std::vector<PeerChannel*> CoordinatorAgent::Channels() {
  std::vector<PeerChannel*> channels;
  for (auto& worker : workers_) channels.push_back(worker.get());
  return channels;
}

void CoordinatorAgent::Accept(absl::Time now) {
  int fd = accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  size_t unproven = 0;
  auto oldest = workers_.end();
  for (auto it = workers_.begin(); it != workers_.end(); ++it) {
    if ((*it)->authenticated()) continue;
    ++unproven;
    if (oldest == workers_.end()) oldest = it;
  }
  std::optional<absl::Time> oldest_opened;
  if (oldest != workers_.end()) oldest_opened = (*oldest)->opened();
  switch (AdmitUnproven(unproven, oldest_opened, now)) {
    case Admission::kAdmit:
      break;
    case Admission::kAdmitCuttingOffOldest:
      NoteRefused("too many connections that did not prove the job's key yet");
      workers_.erase(oldest);
      break;
    case Admission::kRefuse:
      NoteRefused("too many connections that did not prove the job's key yet");
      close(fd);
      return;
  }
  workers_.push_back(std::make_unique<PeerChannel>(Fd(fd), endpoint_, now));
}

void CoordinatorAgent::NoteRefused(const std::string& why) {
  ++refused_;
  if (RefusalWorthSaying(refused_)) {
    Say(absl::StrCat("refused a connection to the supervisor port (", refused_,
                     " so far): ", why));
  }
}

// What a worker may say; the rest is not for the coordinator.
void CoordinatorAgent::Handle(PeerChannel& channel, const PeerMessage& message) {
  if (const auto* hello = std::get_if<HelloMessage>(&message)) {
    Hello(channel, *hello);
    return;
  }
  if (channel.peer.empty()) return;  // nothing counts before hello
  std::visit(Overloaded{
                 [&](const StartedMessage& started) {
                   job_->Started(channel.peer, started.generation);
                 },
                 [&](const EndedMessage& ended) {
                   job_->RanksEnded(channel.peer, ended.generation, ended.statuses,
                                    ended.failed, ended.error);
                 },
                 [&](const StopMessage&) {
                   Say(absl::StrCat("node '", channel.peer, "' asks to stop the job"));
                   if (!stop_requested()) stop_requested_at_ = absl::Now();
                   job_->StopRequested();
                 },
                 [&](const ProgressMessage& progress) {
                   job_->Progressed(channel.peer, progress.generation, absl::Now());
                 },
                 [&](const StacksMessage& stacks) {
                   job_->StacksReported(channel.peer, stacks.generation, stacks.ranks);
                 },
                 [](const auto&) {},
             },
             message);
}

// A node of the job that is not connected now may say hello: for the
// first time, or again after it was lost (it rejoins). One still counted
// as connected may not: no agent takes another's place.
void CoordinatorAgent::Hello(PeerChannel& channel, const HelloMessage& hello) {
  if (!channel.peer.empty() || !job_->MayJoin(hello.node)) {
    Say(absl::StrCat("refused an agent that says it is node '", hello.node, "'"));
    channel.Flush(absl::ZeroDuration());
    shutdown(channel.fd(), SHUT_RDWR);
    return;
  }
  if (job_->membership().WasLost(hello.node)) {
    Say(absl::StrCat("node '", hello.node, "' is back"));
  }
  channel.peer = hello.node;
  job_->Joined(hello.node, hello.nproc);
  channel.Send(WelcomeMessage{state_.run_id, request_.node});
}

void CoordinatorAgent::RanksStarted(int generation) {
  job_->Started(request_.node, generation);
  state_.phase = job_->phase();
}

void CoordinatorAgent::RanksEnded(const std::map<int, int>& statuses,
                                  const std::map<int, int>& failed,
                                  const std::optional<RankError>& error) {
  job_->RanksEnded(request_.node, state_.generation, statuses, failed, error);
}

void CoordinatorAgent::RanksProgressed(absl::Time now) {
  job_->Progressed(request_.node, state_.generation, now);
}

void CoordinatorAgent::StacksCollected(int generation, std::vector<RankStack> ranks) {
  job_->StacksReported(request_.node, generation, ranks);
}

bool CoordinatorAgent::Keep(PeerChannel& worker, absl::Time now, absl::Time* least_recent) {
  if (!worker.authenticated()) {
    // Never part of the job: dropped when it fails or takes too long.
    if (!worker.closed() && now - worker.opened() <= kHandshakeTimeout) return true;
    NoteRefused(worker.closed() ? worker.error() : "no proof of the job's key in time");
    return false;
  }
  std::string lost;
  if (worker.closed()) {
    lost = "its agent's connection closed";
  } else if (now - worker.last_heard() > request_.supervision.heartbeat_timeout) {
    lost = absl::StrCat("no heartbeat for ",
                        absl::FormatDuration(request_.supervision.heartbeat_timeout));
  }
  if (lost.empty()) {
    if (!worker.peer.empty()) *least_recent = std::min(*least_recent, worker.last_heard());
    return true;
  }
  if (!worker.peer.empty()) {
    if (!stop_requested()) Say(absl::StrCat("lost node '", worker.peer, "': ", lost));
    job_->Lost(worker.peer, lost, now);
  }
  return false;
}

void CoordinatorAgent::CheckPeers(absl::Time now) {
  absl::Time least_recent = now;
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (Keep(**it, now, &least_recent)) {
      ++it;
    } else {
      it = workers_.erase(it);
    }
  }
  state_.last_heartbeat = least_recent;
}

// The coordinator carries out what the job's decisions say.
void CoordinatorAgent::Decide(absl::Time now) {
  for (const JobCoordinator::Order& order : job_->Poll(now)) {
    Carry(order);
    if (done_) return;
  }
  JobPhase phase = job_->phase();
  if (phase != state_.phase) {
    state_.phase = phase;
    MarkDirty();
  }
  KeepMembership();
}

void CoordinatorAgent::KeepMembership() {
  const Membership& membership = job_->membership();
  std::vector<std::string> spares = membership.Standby();
  if (membership.generations().size() == state_.generations.size() &&
      membership.lost().size() == state_.lost.size() && spares == state_.spares &&
      (state_.generations.empty() ||
       state_.generations.back().generation == membership.generations().back().generation)) {
    return;
  }
  state_.generations = membership.generations();
  state_.lost = membership.lost();
  state_.spares = std::move(spares);
  state_.node_losses = membership.node_losses();
  state_.restarts_used = job_->restarts_used();
  MarkDirty();
}

void CoordinatorAgent::Carry(const JobCoordinator::Order& order) {
  switch (order.kind) {
    case JobCoordinator::Order::Kind::kStart: {
      // A restart says why, in every rank's log. In an elastic job every
      // node learns the generation's members and places its ranks among
      // them; in the others env.sh's placement holds.
      StartMessage start{order.generation, job_->restart_reason(), {}};
      if (job_->Elastic()) start.members = job_->membership().Placed();
      StartGeneration(start.generation, start.why, start.members);
      for (auto& worker : workers_) {
        if (!worker->peer.empty()) worker->Send(start);
      }
      break;
    }
    case JobCoordinator::Order::Kind::kStop:
      for (auto& worker : workers_) {
        if (!worker->peer.empty()) worker->Send(StopMessage{order.generation});
      }
      StopLocalRanks();
      break;
    case JobCoordinator::Order::Kind::kCollectStacks:
      Say(absl::StrCat("no rank made progress for ", absl::FormatDuration(request_.hang_timeout),
                       ": collecting every rank's stacks"));
      for (auto& worker : workers_) {
        if (!worker->peer.empty()) worker->Send(CollectStacksMessage{order.generation});
      }
      CollectStacks(order.generation);
      break;
    case JobCoordinator::Order::Kind::kEnd: {
      EndMessage end{job_->phase(), job_->exit_status(), job_->failure()};
      for (auto& worker : workers_) worker->Send(end);
      for (auto& worker : workers_) worker->Flush(kLastWords);
      Finish(job_->phase(), job_->failure(), job_->exit_status());
      break;
    }
  }
}

}  // namespace fleetplan
