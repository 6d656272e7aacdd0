#include "tools/agent/node_part.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/process/files.h"

namespace fleetplan {
namespace {

constexpr absl::Duration kPollInterval = absl::Milliseconds(50);

std::vector<size_t> PollOnly(const std::vector<int>& watch) {
  std::vector<pollfd> fds;
  for (int fd : watch) fds.push_back({fd, POLLIN, 0});
  std::vector<size_t> ready;
  int n = poll(fds.data(), fds.size(), absl::ToInt64Milliseconds(kPollInterval));
  if (n <= 0) return ready;
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents != 0) ready.push_back(i);
  }
  return ready;
}

}  // namespace

absl::StatusOr<std::string> CreateRunDir(const std::string& log_dir, const std::string& run_id) {
  std::string run_dir = RunDir(log_dir, run_id);
  if (absl::Status made = MakeDirs(run_dir); !made.ok()) return made;
  std::string latest = absl::StrCat(log_dir, "/latest");
  std::string temp = absl::StrCat(latest, ".tmp.", getpid());
  unlink(temp.c_str());
  if (symlink(run_id.c_str(), temp.c_str()) != 0 ||
      rename(temp.c_str(), latest.c_str()) != 0) {
    int err = errno;
    unlink(temp.c_str());
    return absl::InternalError(
        absl::StrCat("cannot point ", latest, " at ", run_id, ": ", std::strerror(err)));
  }
  return run_dir;
}

NodePart::NodePart(const NodeAgentOptions& options)
    : options_(options),
      request_(options.request),
      hang_(options.request.node, options.request.hang_timeout, options.stack_tools) {
  state_.node = options.request.node;
  state_.agent_pid = getpid();
  state_.max_restarts = options.request.restarts;
  state_.heartbeat_timeout = options.request.supervision.heartbeat_timeout;
  state_.started_at = absl::Now();
  state_.last_heartbeat = state_.started_at;
  state_.coordinator = options.request.supervision.coordinator.empty();
}

absl::StatusOr<NodeJobState> NodePart::Run() {
  if (absl::Status set_up = SetUp(absl::Now()); !set_up.ok()) return set_up;
  while (!done_) {
    Step();
  }
  if (!told_started_ && options_.on_started) options_.on_started(false);
  return state_;
}

void NodePart::Step() {
  std::vector<int> watch;
  if (options_.stop_fd >= 0) watch.push_back(options_.stop_fd);
  if (options_.stdin_fd >= 0 && !stdin_closed_) watch.push_back(options_.stdin_fd);
  if (ListenFd() >= 0) watch.push_back(ListenFd());
  for (PeerChannel* channel : Channels()) watch.push_back(channel->fd());
  std::vector<size_t> ready = ranks_ != nullptr ? ranks_->Pump(watch, kPollInterval)
                                                : PollOnly(watch);
  absl::Time now = absl::Now();
  HandleReady(watch, ready, now);
  if (done_) return;
  CheckRanks();
  WatchForHangs(now);
  CheckPeers(now);
  if (!done_) Decide(now);
  if (!done_) Heartbeat(now);
}

void NodePart::HandleReady(const std::vector<int>& watch, const std::vector<size_t>& ready,
                           absl::Time now) {
  std::vector<PeerChannel*> channels = Channels();
  for (size_t index : ready) {
    int fd = watch[index];
    if (fd == options_.stop_fd) {
      DrainStopFd();
      RequestStop("signalled");
    } else if (fd == options_.stdin_fd) {
      ReadStdin();
    } else if (fd == ListenFd()) {
      Accept(now);
    } else {
      for (PeerChannel* channel : channels) {
        if (channel->fd() != fd) continue;
        for (const PeerMessage& message : channel->Receive(now)) {
          if (!std::holds_alternative<HeartbeatMessage>(message)) Handle(*channel, message);
        }
      }
    }
  }
}

void NodePart::Heartbeat(absl::Time now) {
  if (now >= next_heartbeat_) {
    next_heartbeat_ = now + std::clamp(request_.supervision.heartbeat_timeout / 5,
                                       absl::Milliseconds(100), absl::Seconds(1));
    for (PeerChannel* channel : Channels()) channel->Send(HeartbeatMessage{});
    WriteState(now);
  } else if (dirty_) {
    WriteState(now);
  }
}

void NodePart::DrainStopFd() {
  char buffer[64];
  while (read(options_.stop_fd, buffer, sizeof(buffer)) > 0) {
  }
}

void NodePart::ReadStdin() {
  char buffer[4096];
  ssize_t n = read(options_.stdin_fd, buffer, sizeof(buffer));
  if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN))) return;  // input is ignored
  stdin_closed_ = true;
  RequestStop("stdin closed");
}

void NodePart::Say(const std::string& text) {
  AgentMessage(options_.output_fd, request_.node, text);
}

void NodePart::RequestStop(const std::string& why) {
  if (stop_requested()) return;
  stop_requested_at_ = absl::Now();
  Say(absl::StrCat(why, "; stopping all ranks"));
  StopAsked();
}

RankGroupOptions NodePart::GroupOptions(int generation, const std::string& why, int first_rank,
                                        std::optional<NodePlace> place) const {
  RankGroupOptions group;
  group.node = request_.node;
  group.first_rank = first_rank;
  group.nproc = request_.nproc;
  group.program = request_.program;
  group.run_dir = run_dir_;
  group.generation = generation;
  group.max_restarts = request_.restarts;
  group.restart_reason = why;
  group.output_fd = options_.echo_rank_output ? options_.output_fd : -1;
  group.grace_period = request_.grace_period;
  group.launcher = request_.launcher;
  group.run_id = state_.run_id;
  group.place = std::move(place);
  group.progress_pattern = request_.progress;
  return group;
}

void NodePart::StartGeneration(int generation, const std::string& why,
                               const std::vector<GenerationMember>& members) {
  ranks_.reset();
  state_.generation = generation;
  reported_ = false;
  int first_rank = request_.first_rank;
  std::optional<NodePlace> place;
  if (!members.empty()) {
    std::optional<GenerationPlace> found = PlaceAmong(members, request_.node);
    if (!found.has_value()) {
      WaitAsSpare(generation);
      return;
    }
    first_rank = found->first_rank;
    place = found->place;
  }
  state_.waiting.clear();
  if (generation > 0 && members.empty()) {
    Say(absl::StrCat("restarting all ranks (restart ", generation, " of ", request_.restarts,
                     why.empty() ? "" : absl::StrCat(": ", why), ")"));
  } else if (generation > 0) {
    // An elastic job's generation: a failure's restart, a loss or a return.
    Say(absl::StrCat("starting generation ", generation, " on ", members.size(), " nodes",
                     why.empty() ? "" : absl::StrCat(": ", why)));
  }
  ranks_ = std::make_unique<RankGroup>(GroupOptions(generation, why, first_rank, place));
  ranks_->Start();
  state_.ranks = ranks_->states();
  RanksStarted(generation);
  // Whoever waits for the start reads job.json next.
  WriteState(absl::Now());
  TellStarted();
}

void NodePart::WaitAsSpare(int generation) {
  reported_ = true;  // nothing of this node to report
  state_.ranks.clear();
  if (state_.waiting != "spare") {
    Say(absl::StrCat("no rank of this node runs in generation ", generation,
                     ": waiting as a spare"));
  }
  state_.waiting = "spare";
  state_.phase = JobPhase::kRunning;
  WriteState(absl::Now());
  TellStarted();
}

void NodePart::TellStarted() {
  if (!told_started_ && options_.on_started) {
    told_started_ = true;
    options_.on_started(true);
  }
}

void NodePart::CheckRanks() {
  if (ranks_ == nullptr || reported_) return;
  RankGroup::Progress progress = ranks_->Check();
  if (progress == RankGroup::Progress::kRunning) return;
  if (progress == RankGroup::Progress::kFailed) {
    for (const auto& [rank, status] : ranks_->failed()) {
      Say(absl::StrCat("rank ", rank, " exited with status ", status, "; stopping the job"));
      break;
    }
  }
  StopLocalRanks();
}

void NodePart::WatchForHangs(absl::Time now) {
  if (ranks_ != nullptr && !reported_ && hang_.ProgressedSince(*ranks_, now)) {
    RanksProgressed(now);
  }
  if (std::string note = hang_.TakeNote(); !note.empty()) Say(note);
  std::optional<HangWatch::Collected> collected = hang_.TakeCollected();
  if (!collected.has_value()) return;
  Say(absl::StrCat("collected the stacks of ", collected->ranks.size(), " ranks"));
  StacksCollected(collected->generation, std::move(collected->ranks));
}

void NodePart::CollectStacks(int generation) {
  if (generation != state_.generation) return;
  if (ranks_ == nullptr || reported_) {
    // Nothing of this node runs: an empty report, so no one waits for it.
    StacksCollected(generation, {});
    return;
  }
  Say("the job hung: collecting the stacks of this node's ranks");
  hang_.StartCollecting(*ranks_, run_dir_, generation);
}

void NodePart::StopLocalRanks() {
  if (ranks_ == nullptr || reported_) return;
  ranks_->StopAll();
  reported_ = true;
  state_.ranks = ranks_->states();
  dirty_ = true;
  // The coordinator blames this node's lowest failed rank: its account.
  std::optional<RankError> error;
  if (!ranks_->failed().empty()) error = ranks_->Explain(ranks_->failed().begin()->first);
  RanksEnded(ranks_->statuses(), ranks_->failed(), error);
}

void NodePart::Finish(JobPhase phase, std::optional<JobFailure> failure, int exit_status) {
  StopLocalRanks();
  ranks_.reset();
  state_.phase = phase;
  state_.failure = std::move(failure);
  state_.exit_status = exit_status;
  state_.ended_at = absl::Now();
  if (phase == JobPhase::kFailed && state_.failure.has_value()) {
    Say(absl::StrCat("job failed: ", DescribeFailure(*state_.failure)));
  }
  WriteState(state_.ended_at);
  done_ = true;
}

void NodePart::WriteState(absl::Time now) {
  dirty_ = false;
  state_.updated_at = now;
  absl::Status written = WriteFileAtomic(JobStatePath(request_.log_dir), JobStateToJson(state_),
                                         0600, Durability::kProcess);
  if (!written.ok() && !write_error_said_) {
    write_error_said_ = true;
    Say(absl::StrCat("cannot write the job's state: ", written.message()));
  }
}

}  // namespace fleetplan
