#include "tools/agent/node_agent.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/agent/hang_watch.h"
#include "tools/agent/job_coordinator.h"
#include "tools/agent/peer_channel.h"
#include "tools/agent/rank_group.h"
#include "tools/agent/sockets.h"
#include "tools/process/files.h"
#include "tools/protocol/peer_message.h"
#include "tools/util/overloaded.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

constexpr absl::Duration kPollInterval = absl::Milliseconds(50);
// How long the last orders get to leave before the coordinator exits, and
// how long a stopped worker waits for the coordinator's word.
constexpr absl::Duration kLastWords = absl::Seconds(2);
// How long a connection to the coordinator may take to prove the job's
// key, and how many may be trying at once: a stranger that connects and
// stays silent, or connects again and again, costs a bounded amount and
// cannot crowd out the job's own agents (the oldest unproven one goes).
constexpr absl::Duration kHandshakeTimeout = absl::Seconds(10);
constexpr size_t kMaxUnproven = 16;

// Only an agent alone needs no key: every other one talks to a peer.
bool HasTheKeyItNeeds(const NodeAgentOptions& options) {
  bool alone = options.coordinator.empty() &&
               (options.nodes.empty() ||
                (options.nodes.size() == 1 && options.nodes[0] == options.node));
  return alone || options.job_key.has_value();
}

absl::Status Validate(const NodeAgentOptions& options) {
  if (options.node.empty()) return absl::InvalidArgumentError("--node is required");
  if (options.nproc < 1) return absl::InvalidArgumentError("--nproc must be at least 1");
  if (options.first_rank < 0) return absl::InvalidArgumentError("--first-rank must be >= 0");
  if (options.restarts < 0) return absl::InvalidArgumentError("--restarts must be >= 0");
  if (options.log_dir.empty()) return absl::InvalidArgumentError("--log-dir is required");
  if (options.program.empty()) {
    return absl::InvalidArgumentError("no program: give it after `--`");
  }
  if (options.heartbeat_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--heartbeat-timeout must be positive");
  }
  if (options.hang_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--hang-timeout must not be negative (0: off)");
  }
  if (!HasTheKeyItNeeds(options)) {
    return absl::InvalidArgumentError(
        "a job of several nodes needs the job's key (--key-file): the agents prove it to "
        "each other on every connection");
  }
  if (!options.coordinator.empty() && !options.nodes.empty()) {
    return absl::InvalidArgumentError("--coordinator (a worker) and --nodes (the coordinator) "
                                      "exclude each other");
  }
  bool alone = options.nodes.empty() ||
               (options.nodes.size() == 1 && options.nodes[0] == options.node);
  if (options.coordinator.empty() && !alone) {
    if (std::find(options.nodes.begin(), options.nodes.end(), options.node) ==
        options.nodes.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--nodes must list this node ('", options.node, "')"));
    }
    if (options.supervisor_port < 1 || options.supervisor_port > 65535) {
      return absl::InvalidArgumentError("a job of several nodes needs --supervisor-port");
    }
  }
  return absl::OkStatus();
}

// Creates LOG_DIR/<run_id> and points LOG_DIR/latest at it (replaced
// atomically, relative so the folder can move). Returns the run folder.
absl::StatusOr<std::string> CreateRunDir(const std::string& log_dir, const std::string& run_id) {
  std::string run_dir = RunDir(log_dir, run_id);
  FP_RETURN_IF_ERROR(MakeDirs(run_dir));
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

class NodeAgent {
 public:
  explicit NodeAgent(const NodeAgentOptions& options)
      : options_(options), hang_(options.node, options.hang_timeout, options.stack_tools) {
    heartbeat_interval_ = std::clamp(options.heartbeat_timeout / 5, absl::Milliseconds(100),
                                     absl::Seconds(1));
    state_.node = options.node;
    state_.agent_pid = getpid();
    state_.max_restarts = options.restarts;
    state_.heartbeat_timeout = options.heartbeat_timeout;
    state_.started_at = absl::Now();
    state_.last_heartbeat = state_.started_at;
    state_.coordinator = options.coordinator.empty();
  }

  absl::StatusOr<NodeJobState> Run() {
    absl::Time now = absl::Now();
    if (state_.coordinator) {
      FP_RETURN_IF_ERROR(SetUpCoordinator(now));
    } else {
      FP_RETURN_IF_ERROR(SetUpWorker(now));
    }
    while (!done_) {
      Step();
    }
    if (!told_started_ && options_.on_started) options_.on_started(false);
    return state_;
  }

 private:
  absl::Status SetUpCoordinator(absl::Time now) {
    JobCoordinator::Options job;
    job.nodes = options_.nodes.empty() ? std::vector<std::string>{options_.node} : options_.nodes;
    job.max_restarts = options_.restarts;
    job.join_timeout = options_.heartbeat_timeout;
    job.restart_backoff = options_.restart_backoff;
    job.hang_timeout = options_.hang_timeout;
    // The stack tools' own timeout, and a margin for the message.
    job.collect_timeout = options_.stack_tools.tool_timeout * 2 + absl::Seconds(10);
    if (job.nodes.size() > 1) {
      int fd = BindAnyAddress(options_.supervisor_port);
      if (fd < 0) {
        return absl::UnavailableError(absl::StrCat("cannot listen on supervisor port ",
                                                   options_.supervisor_port, ": ",
                                                   std::strerror(-fd)));
      }
      listener_ = Fd(fd);
      FP_ASSIGN_OR_RETURN(endpoint_, TlsEndpoint::Make(TlsEndpoint::Side::kServer,
                                                       *options_.job_key, kSupervisionPurpose));
    }
    job_ = std::make_unique<JobCoordinator>(job, now);
    state_.run_id = options_.run_id.empty() ? MakeRunId(now, getpid()) : options_.run_id;
    FP_ASSIGN_OR_RETURN(run_dir_, CreateRunDir(options_.log_dir, state_.run_id));
    job_->Joined(options_.node);
    WriteState(now);
    return absl::OkStatus();
  }

  absl::Status SetUpWorker(absl::Time now) {
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

  // Connects and proves the job's key both ways, retrying until `deadline`
  // (the coordinator may not listen yet, or something else may hold the
  // port for a moment).
  absl::Status ConnectToCoordinator(absl::Time deadline) {
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

  // One turn of the loop: wait for output, signals or messages, then act.
  void Step() {
    std::vector<int> watch;
    if (options_.stop_fd >= 0) watch.push_back(options_.stop_fd);
    if (options_.stdin_fd >= 0 && !stdin_closed_) watch.push_back(options_.stdin_fd);
    if (listener_.get() >= 0) watch.push_back(listener_.get());
    std::vector<PeerChannel*> channels = Channels();
    for (PeerChannel* channel : channels) watch.push_back(channel->fd());
    std::vector<size_t> ready = ranks_ != nullptr ? ranks_->Pump(watch, kPollInterval)
                                                  : PollOnly(watch);
    absl::Time now = absl::Now();
    for (size_t index : ready) {
      int fd = watch[index];
      if (fd == options_.stop_fd) {
        DrainStopFd();
        RequestStop("signalled");
      } else if (fd == options_.stdin_fd) {
        ReadStdin();
      } else if (fd == listener_.get()) {
        Accept(now);
      } else {
        for (PeerChannel* channel : channels) {
          if (channel->fd() != fd) continue;
          for (const PeerMessage& message : channel->Receive(now)) {
            Handle(*channel, message);
          }
        }
      }
    }
    if (done_) return;
    CheckRanks();
    WatchForHangs(now);
    CheckPeers(now);
    if (job_ != nullptr && !done_) Drive(now);
    if (stop_requested_ && !state_.coordinator && !done_ &&
        now - stop_requested_at_ > kLastWords) {
      Finish(JobPhase::kStopped, std::nullopt, 128 + 15);
    }
    if (done_) return;
    if (now >= next_heartbeat_) {
      next_heartbeat_ = now + heartbeat_interval_;
      for (PeerChannel* channel : Channels()) channel->Send(HeartbeatMessage{});
      WriteState(now);
    } else if (dirty_) {
      WriteState(now);
    }
  }

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

  std::vector<PeerChannel*> Channels() {
    std::vector<PeerChannel*> channels;
    if (coordinator_ != nullptr) channels.push_back(coordinator_.get());
    for (auto& worker : workers_) channels.push_back(worker.get());
    return channels;
  }

  void DrainStopFd() {
    char buffer[64];
    while (read(options_.stop_fd, buffer, sizeof(buffer)) > 0) {
    }
  }

  void ReadStdin() {
    char buffer[4096];
    ssize_t n = read(options_.stdin_fd, buffer, sizeof(buffer));
    if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN))) return;  // input is ignored
    stdin_closed_ = true;
    RequestStop("stdin closed");
  }

  void Say(const std::string& text) {
    AgentMessage(options_.output_fd, options_.node, text);
  }

  void RequestStop(const std::string& why) {
    if (stop_requested_) return;
    stop_requested_ = true;
    stop_requested_at_ = absl::Now();
    Say(absl::StrCat(why, "; stopping all ranks"));
    if (job_ != nullptr) {
      job_->StopRequested();
      return;
    }
    // A worker stops its own ranks at once (the coordinator may be out of
    // reach) and tells the coordinator, which stops the others.
    if (coordinator_ != nullptr) coordinator_->Send(StopMessage{});
    StopLocalRanks();
  }

  void Accept(absl::Time now) {
    int fd = accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    size_t unproven = 0;
    auto oldest = workers_.end();
    for (auto it = workers_.begin(); it != workers_.end(); ++it) {
      if ((*it)->authenticated()) continue;
      ++unproven;
      if (oldest == workers_.end()) oldest = it;
    }
    if (unproven >= kMaxUnproven) {
      NoteRefused("too many connections that did not prove the job's key yet");
      workers_.erase(oldest);
    }
    workers_.push_back(std::make_unique<PeerChannel>(Fd(fd), endpoint_, now));
  }

  // Says why a connection was refused, without letting a flood of them
  // fill the agent's log: the first few, then every hundredth.
  void NoteRefused(const std::string& why) {
    ++refused_;
    if (RefusalWorthSaying(refused_)) {
      Say(absl::StrCat("refused a connection to the supervisor port (", refused_,
                       " so far): ", why));
    }
  }

  void Handle(PeerChannel& channel, const PeerMessage& message) {
    if (std::holds_alternative<HeartbeatMessage>(message)) return;
    if (job_ != nullptr) {
      HandleAsCoordinator(channel, message);
    } else {
      HandleAsWorker(message);
    }
  }

  // What a worker may say; the rest is not for the coordinator.
  void HandleAsCoordinator(PeerChannel& channel, const PeerMessage& message) {
    if (const auto* hello = std::get_if<HelloMessage>(&message)) {
      Hello(channel, hello->node);
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
                     stop_requested_ = true;
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

  void Hello(PeerChannel& channel, const std::string& node) {
    bool known =
        std::find(options_.nodes.begin(), options_.nodes.end(), node) != options_.nodes.end();
    if (!known || job_->HasJoined(node)) {
      Say(absl::StrCat("refused an agent that says it is node '", node, "'"));
      channel.Flush(absl::ZeroDuration());
      shutdown(channel.fd(), SHUT_RDWR);
      return;
    }
    channel.peer = node;
    job_->Joined(node);
    channel.Send(WelcomeMessage{state_.run_id, options_.node});
  }

  // What the coordinator may say; the rest is not for a worker.
  void HandleAsWorker(const PeerMessage& message) {
    std::visit(Overloaded{
                   [&](const WelcomeMessage& welcome) { Welcome(welcome); },
                   [&](const StartMessage& start) {
                     if (!stop_requested_) StartGeneration(start.generation, start.why);
                   },
                   [&](const StopMessage& stop) {
                     if (stop.generation == state_.generation) StopLocalRanks();
                   },
                   [&](const CollectStacksMessage& collect) {
                     CollectStacks(collect.generation);
                   },
                   [&](const EndMessage& end) {
                     Finish(end.phase, end.failure, end.exit_status);
                   },
                   [](const auto&) {},
               },
               message);
  }

  void Welcome(const WelcomeMessage& welcome) {
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
    dirty_ = true;
  }

  void StartGeneration(int generation, const std::string& why) {
    ranks_.reset();
    state_.generation = generation;
    reported_ = false;
    RankGroupOptions group;
    group.node = options_.node;
    group.first_rank = options_.first_rank;
    group.nproc = options_.nproc;
    group.program = options_.program;
    group.run_dir = run_dir_;
    group.generation = generation;
    group.max_restarts = options_.restarts;
    group.restart_reason = why;
    group.output_fd = options_.echo_rank_output ? options_.output_fd : -1;
    group.grace_period = options_.grace_period;
    group.launcher = options_.launcher;
    group.run_id = state_.run_id;
    group.progress_pattern = options_.progress_pattern;
    if (generation > 0) {
      Say(absl::StrCat("restarting all ranks (restart ", generation, " of ", options_.restarts,
                       why.empty() ? "" : absl::StrCat(": ", why), ")"));
    }
    ranks_ = std::make_unique<RankGroup>(std::move(group));
    ranks_->Start();
    state_.ranks = ranks_->states();
    if (job_ != nullptr) {
      job_->Started(options_.node, generation);
      state_.phase = job_->phase();
    } else {
      state_.phase = JobPhase::kRunning;
      if (coordinator_ != nullptr) coordinator_->Send(StartedMessage{generation});
    }
    // Whoever waits for the start reads job.json next.
    WriteState(absl::Now());
    if (!told_started_ && options_.on_started) {
      told_started_ = true;
      options_.on_started(true);
    }
  }

  // Local ranks that failed or all succeeded: stop the rest and report.
  void CheckRanks() {
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

  // Progress of this node's ranks goes to the coordinator; stacks asked
  // for go there once collected.
  void WatchForHangs(absl::Time now) {
    if (ranks_ != nullptr && !reported_ && hang_.ProgressedSince(*ranks_, now)) {
      if (job_ != nullptr) {
        job_->Progressed(options_.node, state_.generation, now);
      } else if (coordinator_ != nullptr) {
        coordinator_->Send(ProgressMessage{state_.generation});
      }
    }
    if (std::string note = hang_.TakeNote(); !note.empty()) Say(note);
    std::optional<HangWatch::Collected> collected = hang_.TakeCollected();
    if (!collected.has_value()) return;
    Say(absl::StrCat("collected the stacks of ", collected->ranks.size(), " ranks"));
    if (job_ != nullptr) {
      job_->StacksReported(options_.node, collected->generation, collected->ranks);
    } else if (coordinator_ != nullptr) {
      coordinator_->Send(StacksMessage{collected->generation, std::move(collected->ranks)});
    }
  }

  void CollectStacks(int generation) {
    if (generation != state_.generation) return;
    if (ranks_ == nullptr || reported_) {
      // Nothing of this node runs: an empty report, so no one waits for it.
      if (coordinator_ != nullptr) coordinator_->Send(StacksMessage{generation, {}});
      if (job_ != nullptr) job_->StacksReported(options_.node, generation, {});
      return;
    }
    Say("the job hung: collecting the stacks of this node's ranks");
    hang_.StartCollecting(*ranks_, run_dir_, generation);
  }

  void StopLocalRanks() {
    if (ranks_ == nullptr || reported_) return;
    ranks_->StopAll();
    reported_ = true;
    state_.ranks = ranks_->states();
    dirty_ = true;
    std::map<int, int> statuses = ranks_->statuses();
    // The coordinator blames this node's lowest failed rank: its account.
    std::optional<RankError> error;
    if (!ranks_->failed().empty()) error = ranks_->Explain(ranks_->failed().begin()->first);
    if (job_ != nullptr) {
      job_->RanksEnded(options_.node, state_.generation, statuses, ranks_->failed(), error);
    } else if (coordinator_ != nullptr) {
      coordinator_->Send(EndedMessage{state_.generation, statuses, ranks_->failed(), error});
    }
  }

  void CheckPeers(absl::Time now) {
    if (coordinator_ != nullptr) {
      state_.last_heartbeat = coordinator_->last_heard();
      std::string lost;
      if (coordinator_->closed()) {
        lost = "its connection closed";
      } else if (now - coordinator_->last_heard() > options_.heartbeat_timeout) {
        lost = absl::StrCat("no heartbeat for ", absl::FormatDuration(options_.heartbeat_timeout));
      }
      if (lost.empty()) return;
      StopLocalRanks();
      if (stop_requested_) {
        Finish(JobPhase::kStopped, std::nullopt, 128 + 15);
        return;
      }
      Say(absl::StrCat("lost the coordinator (", lost, "); stopped this node's ranks"));
      std::string who = coordinator_node_.empty() ? options_.coordinator : coordinator_node_;
      Finish(JobPhase::kFailed,
             JobFailure{who, -1, 1, absl::StrCat("lost the coordinator from node '",
                                                 options_.node, "': ", lost)},
             1);
      return;
    }
    absl::Time least_recent = now;
    for (auto it = workers_.begin(); it != workers_.end();) {
      PeerChannel& worker = **it;
      if (!worker.authenticated()) {
        // Never part of the job: dropped when it fails or takes too long.
        if (worker.closed() || now - worker.opened() > kHandshakeTimeout) {
          NoteRefused(worker.closed() ? worker.error() : "no proof of the job's key in time");
          it = workers_.erase(it);
        } else {
          ++it;
        }
        continue;
      }
      std::string lost;
      if (worker.closed()) {
        lost = "its agent's connection closed";
      } else if (now - worker.last_heard() > options_.heartbeat_timeout) {
        lost = absl::StrCat("no heartbeat for ", absl::FormatDuration(options_.heartbeat_timeout));
      }
      if (lost.empty()) {
        if (!worker.peer.empty()) least_recent = std::min(least_recent, worker.last_heard());
        ++it;
        continue;
      }
      if (!worker.peer.empty()) {
        if (!stop_requested_) Say(absl::StrCat("lost node '", worker.peer, "': ", lost));
        job_->Lost(worker.peer, lost);
      }
      it = workers_.erase(it);
    }
    state_.last_heartbeat = least_recent;
  }

  // The coordinator carries out what the job's decisions say.
  void Drive(absl::Time now) {
    for (const JobCoordinator::Order& order : job_->Poll(now)) {
      switch (order.kind) {
        case JobCoordinator::Order::Kind::kStart: {
          // A restart says why, in every rank's log.
          std::string why = order.generation > 0 && job_->failure().has_value()
                                ? DescribeFailure(*job_->failure())
                                : "";
          StartGeneration(order.generation, why);
          for (auto& worker : workers_) {
            worker->Send(StartMessage{order.generation, why});
          }
          break;
        }
        case JobCoordinator::Order::Kind::kStop:
          for (auto& worker : workers_) worker->Send(StopMessage{order.generation});
          StopLocalRanks();
          break;
        case JobCoordinator::Order::Kind::kCollectStacks:
          Say(absl::StrCat("no rank made progress for ",
                           absl::FormatDuration(options_.hang_timeout),
                           ": collecting every rank's stacks"));
          for (auto& worker : workers_) worker->Send(CollectStacksMessage{order.generation});
          CollectStacks(order.generation);
          break;
        case JobCoordinator::Order::Kind::kEnd: {
          EndMessage end{job_->phase(), job_->exit_status(), job_->failure()};
          for (auto& worker : workers_) worker->Send(end);
          for (auto& worker : workers_) worker->Flush(kLastWords);
          Finish(job_->phase(), job_->failure(), job_->exit_status());
          return;
        }
      }
    }
    JobPhase phase = job_->phase();
    if (phase != state_.phase) {
      state_.phase = phase;
      dirty_ = true;
    }
  }

  void Finish(JobPhase phase, std::optional<JobFailure> failure, int exit_status) {
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

  void WriteState(absl::Time now) {
    dirty_ = false;
    state_.updated_at = now;
    absl::Status written =
        WriteFileAtomic(JobStatePath(options_.log_dir), JobStateToJson(state_), 0600);
    if (!written.ok() && !write_error_said_) {
      write_error_said_ = true;
      Say(absl::StrCat("cannot write the job's state: ", written.message()));
    }
  }

  const NodeAgentOptions& options_;
  NodeJobState state_;
  std::string run_dir_;
  absl::Duration heartbeat_interval_;
  absl::Time next_heartbeat_ = absl::InfinitePast();
  std::unique_ptr<RankGroup> ranks_;
  HangWatch hang_;
  bool reported_ = false;  // this generation's end was reported
  // The coordinator's side.
  std::unique_ptr<JobCoordinator> job_;
  Fd listener_;
  std::vector<std::unique_ptr<PeerChannel>> workers_;
  // This side's TLS settings, with the job's key (supervision purpose).
  std::shared_ptr<TlsEndpoint> endpoint_;
  size_t refused_ = 0;
  // A worker's side.
  std::unique_ptr<PeerChannel> coordinator_;
  std::string coordinator_node_;

  bool stdin_closed_ = false;
  bool stop_requested_ = false;
  absl::Time stop_requested_at_;
  bool told_started_ = false;
  bool dirty_ = false;
  bool write_error_said_ = false;
  bool done_ = false;
};

}  // namespace

absl::StatusOr<NodeJobState> RunNodeAgent(const NodeAgentOptions& options) {
  FP_RETURN_IF_ERROR(Validate(options));
  NodeAgent agent(options);
  return agent.Run();
}

}  // namespace fleetplan
