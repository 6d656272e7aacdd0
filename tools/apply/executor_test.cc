#include "tools/apply/executor.h"

#include <stdlib.h>

#include <functional>
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/transport.h"
#include "tools/apply/preflight_report.h"
#include "tools/process/files.h"
#include "tools/protocol/agent_command.h"
#include "tools/protocol/job_state.h"
#include "tools/protocol/session_message.h"
#include "tools/protocol/session_wire.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// What a fake node does when asked to run a command.
struct Reply {
  int status = 0;
  std::string output;
  absl::Duration delay = absl::ZeroDuration();
  bool until_cancelled = false;  // hold until the run is cancelled, then:
  int cancelled_status = 143;
  bool lost = false;  // after `delay`, the connection is lost: no status
};

// Every fake node's filesystem and a log of what ran, shared by all threads.
struct World {
  absl::Mutex mu;
  std::map<std::string, std::string> files;  // absolute path → content
  std::map<std::string, uint32_t> modes;     // absolute path → mode written with
  std::vector<std::string> runs;             // "node: command"
  std::vector<std::string> sent;             // "node: path"
  std::vector<std::string> held_stdin;       // "node: command" run with stdin held
  int connections = 0;                       // opened
  // The nodes' agents serve apply sessions (FakeSession); what was asked
  // of them besides files: "node: workdir", "node: verify".
  bool agent_sessions = false;
  std::vector<std::string> session_requests;
  std::map<std::string, std::pair<absl::Time, absl::Time>> spans;  // per run
  int running = 0;
  int max_running = 0;
  std::function<Reply(const std::string& node, const std::string& command)> reply =
      [](const std::string&, const std::string&) { return Reply(); };
  // The agent's side: following a job's logs ("follow") and stopping it
  // ("stop"), logged apart from `runs`.
  std::vector<std::string> follows, stops;  // "node"
  std::function<Reply(const std::string& node, const std::string& what)> agent =
      [](const std::string&, const std::string&) { return Reply(); };
  // How the job ends: a follower, when it returns, leaves job.json so.
  std::string run_id;  // the --run-id of the last launch
  JobPhase end_phase = JobPhase::kSucceeded;
  std::optional<JobFailure> end_failure;
  int end_status = 0;
};

std::string JobJsonPath(const std::string& node) {
  return absl::StrCat("/w/", node, "/.fleetplan/nodes/", node, "/logs/job.json");
}

class FakeConnection : public Connection {
 public:
  FakeConnection(World* world, std::string node) : world_(world), node_(std::move(node)) {}

  absl::StatusOr<int> Run(const CommandSpec& command, const OutputCallback& on_output,
                          const absl::Notification* cancel) override {
    absl::StatusOr<AgentCommand> agent = ParseAgentCommandLine(command.command);
    if (agent.ok() && (std::holds_alternative<AgentLogs>(*agent) ||
                       std::holds_alternative<AgentStop>(*agent))) {
      return RunAgent(*agent, on_output, cancel);
    }
    absl::Time start = absl::Now();
    Reply reply;
    // A launch stands in the world's record as "launch <node>"; its run id
    // (the agent's --run-id) is the world's.
    std::string what = command.command;
    bool launch =
        command.launches_agent && agent.ok() && std::holds_alternative<AgentLaunch>(*agent);
    if (launch) what = "launch " + std::get<AgentLaunch>(*agent).node;
    {
      absl::MutexLock lock(&world_->mu);
      if (launch) world_->run_id = std::get<AgentLaunch>(*agent).run_id;
      world_->runs.push_back(absl::StrCat(node_, ": ", what));
      if (command.hold_stdin) world_->held_stdin.push_back(absl::StrCat(node_, ": ", what));
      world_->max_running = std::max(world_->max_running, ++world_->running);
      reply = world_->reply(node_, what);
    }
    if (!reply.output.empty()) on_output(reply.output);
    int status = reply.status;
    if (reply.until_cancelled) {
      cancel->WaitForNotification();
      status = reply.cancelled_status;
    } else {
      absl::SleepFor(reply.delay);
    }
    absl::MutexLock lock(&world_->mu);
    --world_->running;
    world_->spans[absl::StrCat(node_, ": ", what)] = {start, absl::Now()};
    if (reply.lost) return absl::UnavailableError("connection lost while running a command");
    // A launch that succeeded left its agent running, as job.json says.
    if (command.launches_agent && status == 0) {
      NodeJobState state;
      state.run_id = world_->run_id;
      state.node = node_;
      state.phase = JobPhase::kRunning;
      state.updated_at = absl::Now();
      world_->files[JobJsonPath(node_)] = JobStateToJson(state);
    }
    return status;
  }

  // The agent's `logs --follow` and `stop`, as the world says they go.
  absl::StatusOr<int> RunAgent(const AgentCommand& command, const OutputCallback& on_output,
                               const absl::Notification* cancel) {
    const AgentLogs* logs = std::get_if<AgentLogs>(&command);
    bool follow = logs != nullptr && logs->follow;
    Reply reply;
    {
      absl::MutexLock lock(&world_->mu);
      (follow ? world_->follows : world_->stops).push_back(node_);
      reply = world_->agent(node_, follow ? "follow" : "stop");
    }
    if (!reply.output.empty()) on_output(reply.output);
    if (reply.until_cancelled) {
      cancel->WaitForNotification();
    } else {
      absl::SleepFor(reply.delay);
    }
    if (reply.lost) return absl::UnavailableError("connection lost while running a command");
    if (reply.until_cancelled) return reply.cancelled_status;
    absl::MutexLock lock(&world_->mu);
    NodeJobState state;
    state.run_id = world_->run_id;
    state.node = node_;
    state.phase = follow ? world_->end_phase : JobPhase::kStopped;
    state.failure = follow ? world_->end_failure : std::nullopt;
    state.exit_status = follow ? world_->end_status : 143;
    world_->files[JobJsonPath(node_)] = JobStateToJson(state);
    return follow ? state.exit_status : 0;
  }

  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    absl::MutexLock lock(&world_->mu);
    auto it = world_->files.find(path);
    if (it == world_->files.end()) return absl::NotFoundError(path);
    return it->second;
  }

  absl::Status WriteFile(const std::string& path, absl::string_view content,
                         uint32_t mode) override {
    absl::MutexLock lock(&world_->mu);
    world_->files[path] = std::string(content);
    world_->modes[path] = mode;
    return absl::OkStatus();
  }

  absl::Status PutFiles(const std::vector<FileToSend>& files,
                        const std::string& root) override {
    for (const FileToSend& file : files) {
      absl::StatusOr<std::string> content = ReadFileToString(file.local_path);
      if (!content.ok()) return content.status();
      absl::MutexLock lock(&world_->mu);
      world_->files[absl::StrCat(root, "/", file.path)] = *content;
      world_->sent.push_back(absl::StrCat(node_, ": ", file.path));
    }
    return absl::OkStatus();
  }

  absl::Status RemoveFiles(const std::string& root,
                           const std::vector<std::string>& paths) override {
    absl::MutexLock lock(&world_->mu);
    for (const std::string& path : paths) world_->files.erase(absl::StrCat(root, "/", path));
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<CommandStream>> OpenStream(const std::string& command) override;

 private:
  World* world_;
  std::string node_;
};

// A node's agent serving an apply session over the world's files: what
// tools/agent/apply_session.cc does on a real node, in memory.
class FakeSession : public CommandStream {
 public:
  FakeSession(World* world, std::string node, Connection* commands)
      : world_(world), node_(std::move(node)), commands_(commands) {
    out_ = EncodeFrame(FrameType::kHello, {kSessionGreeting});
  }
  absl::Status Write(absl::string_view bytes) override {
    in_.Feed(bytes);
    while (true) {
      absl::StatusOr<std::optional<Frame>> frame = in_.Next();
      if (!frame.ok()) return frame.status();
      if (!frame->has_value()) return absl::OkStatus();
      Handle(**frame);
    }
  }
  absl::StatusOr<std::string> Read(absl::Duration) override {
    std::string out;
    out.swap(out_);
    return out;
  }
  std::string ErrorOutput() override { return ""; }

 private:
  void Answer(FrameType type, const std::vector<std::string>& fields = {}) {
    out_ += EncodeFrame(type, fields);
  }
  void Handle(const Frame& frame) {
    if (put_left_ > 0 || file_left_ > 0) return Upload(frame);
    absl::StatusOr<SessionRequest> request = ParseSessionRequest(frame);
    if (!request.ok()) {
      ADD_FAILURE() << request.status();
      return;
    }
    absl::MutexLock lock(&world_->mu);
    std::visit([this](const auto& typed) { Serve(typed); }, *request);
  }
  void Serve(const ReadRequest& read) ABSL_EXCLUSIVE_LOCKS_REQUIRED(world_->mu) {
    ContentsAnswer answer;
    for (const std::string& path : read.paths) {
      auto it = world_->files.find(path);
      if (it == world_->files.end()) {
        answer.files.push_back({FileContent::Kind::kMissing, path});
      } else {
        answer.files.push_back({FileContent::Kind::kOk, it->second});
      }
    }
    out_ += EncodeContents(answer);
  }
  void Serve(const WriteRequest& write) ABSL_EXCLUSIVE_LOCKS_REQUIRED(world_->mu) {
    world_->files[write.path] = write.content;
    Answer(FrameType::kOk);
  }
  void Serve(const PutRequest& put) {
    root_ = put.root;
    put_left_ = static_cast<int>(put.count);
  }
  void Serve(const RemoveRequest& remove) ABSL_EXCLUSIVE_LOCKS_REQUIRED(world_->mu) {
    for (const std::string& path : remove.paths) {
      world_->files.erase(absl::StrCat(remove.root, "/", path));
    }
    Answer(FrameType::kOk);
  }
  void Serve(const WorkdirRequest&) ABSL_EXCLUSIVE_LOCKS_REQUIRED(world_->mu) {
    world_->session_requests.push_back(absl::StrCat(node_, ": workdir"));
    Answer(FrameType::kOutput, {"fleetplan-check workdir ok writable\n"});
    Answer(FrameType::kStatus, {"0"});
  }
  void Serve(const VerifyRequest& verify) ABSL_EXCLUSIVE_LOCKS_REQUIRED(world_->mu) {
    world_->session_requests.push_back(absl::StrCat(node_, ": verify"));
    if (!verify.record_path.empty()) world_->files[verify.record_path] = verify.record;
    Answer(FrameType::kOutput, {"as listed\n"});
    Answer(FrameType::kStatus, {"0"});
  }
  // Commands as the fake node runs them (world_->mu held: let go of it).
  void Serve(const RunRequest& run) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    CommandSpec command{run.command};
    command.env = run.env;
    world_->mu.Unlock();
    absl::StatusOr<int> status = commands_->Run(
        command, [&](absl::string_view chunk) { Answer(FrameType::kOutput, {std::string(chunk)}); },
        nullptr);
    world_->mu.Lock();
    Answer(FrameType::kStatus, {absl::StrCat(status.ok() ? *status : 255)});
  }
  void Upload(const Frame& frame) {
    if (frame.type == FrameType::kFile) {
      absl::StatusOr<PutFileHeader> header = ParsePutFileHeader(frame);
      ASSERT_TRUE(header.ok()) << header.status();
      path_ = header->path;
      file_left_ = header->size;
      content_.clear();
    } else {
      content_ += frame.fields[0];
      file_left_ -= frame.fields[0].size();
    }
    if (file_left_ > 0) return;  // its data is still coming
    absl::MutexLock lock(&world_->mu);
    world_->files[absl::StrCat(root_, "/", path_)] = content_;
    world_->sent.push_back(absl::StrCat(node_, ": ", path_));
    if (--put_left_ == 0) Answer(FrameType::kOk);
  }

  World* world_;
  std::string node_;
  Connection* commands_;
  FrameReader in_;
  std::string out_;
  std::string root_, path_, content_;
  int put_left_ = 0;
  uint64_t file_left_ = 0;
};

absl::StatusOr<std::unique_ptr<CommandStream>> FakeConnection::OpenStream(
    const std::string& command) {
  {
    absl::MutexLock lock(&world_->mu);
    absl::StatusOr<AgentCommand> agent = ParseAgentCommandLine(command);
    if (!world_->agent_sessions || !agent.ok() ||
        !std::holds_alternative<AgentSession>(*agent)) {
      return absl::UnimplementedError("no sessions here");
    }
  }
  return std::make_unique<FakeSession>(world_, node_, this);
}

// Hands the executor the fake world's connections.
class FakeConnections : public ConnectionFactory {
 public:
  explicit FakeConnections(World* world) : world_(world) {}
  bool RelaysSync(const NodeSpec&) const override { return false; }
  absl::StatusOr<std::unique_ptr<Connection>> Connect(const ClusterSpec&,
                                                      const NodeSpec& node,
                                                      const TransportOptions&) const override {
    if (node.address == "unreachable") return absl::UnavailableError("no route to host");
    // As the docker transport answers a read-only connect to a container
    // that apply would create.
    if (node.address == "not-created") return absl::NotFoundError("no container yet");
    absl::MutexLock lock(&world_->mu);
    ++world_->connections;
    return std::make_unique<FakeConnection>(world_, node.name);
  }

 private:
  World* world_;
};

// Records (node, phase, status) for every finished step.
class RecordingReporter : public ProgressReporter {
 public:
  void StepStarted(const Step&) override {}
  void StepFinished(const Step& step, StepStatus status, absl::Duration,
                    absl::string_view) override {
    absl::MutexLock lock(&mu_);
    events_.push_back(absl::StrCat(step.node, " ", PhaseName(step.phase), " ",
                                   StepStatusName(status)));
  }
  void OutputLine(absl::string_view node, absl::string_view line) override {
    absl::MutexLock lock(&mu_);
    lines_.push_back(absl::StrCat(node, "| ", line));
  }
  void ChecksReported(const PreflightReport& report) override {
    absl::MutexLock lock(&mu_);
    tables_.push_back(RenderPreflightTable(report, false));
  }
  void Finished(bool, int, absl::string_view) override {}

  std::vector<std::string> Events(absl::string_view phase) {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const std::string& e : events_) {
      if (absl::StrContains(e, absl::StrCat(" ", phase, " "))) out.push_back(e);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  std::vector<std::string> lines() {
    absl::MutexLock lock(&mu_);
    return lines_;
  }
  std::vector<std::string> tables() {
    absl::MutexLock lock(&mu_);
    return tables_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> events_;
  std::vector<std::string> lines_;
  std::vector<std::string> tables_;
};

ClusterSpec Spec(int nodes) {
  ClusterSpec spec;
  spec.name = "test";
  for (int i = 0; i < nodes; ++i) {
    NodeSpec& node = spec.nodes.emplace_back();
    node.name = std::string(1, 'a' + i);
    node.address = node.name;
    node.transport = "fake";
    node.workdir = absl::StrCat("/w/", node.name);
    node.index = i;
  }
  return spec;
}

Step MakeStep(PhaseKind phase, const std::string& node, StepKind kind,
              const std::string& command) {
  Step step;
  step.phase = phase;
  step.node = node;
  step.kind = kind;
  step.command = command;
  step.hash = absl::StrCat("hash-", PhaseName(phase), "-", node, "-", command);
  return step;
}

// The sync phase CompilePlan makes without [sync]: the agent alone to
// every node.
Phase AgentSyncPhase(const ClusterSpec& spec) {
  Phase sync{PhaseKind::kSync, {}};
  for (const NodeSpec& node : spec.nodes) {
    Step& step = sync.steps.emplace_back(
        MakeStep(PhaseKind::kSync, node.name, StepKind::kSyncTree, ""));
    step.inputs = {{"files", "the launch agent"}, {"destination", node.workdir}};
  }
  return sync;
}

// A plan with a `check` step per node running `check <node>` and a
// `launch-agent` step per node running `launch <node>`.
Plan CheckAndLaunchPlan(const ClusterSpec& spec) {
  Plan plan;
  plan.phases.resize(2);
  Phase& check = plan.phases[0];
  check.kind = PhaseKind::kPreflight;
  Phase& launch = plan.phases[1];
  launch.kind = PhaseKind::kLaunch;
  for (const NodeSpec& node : spec.nodes) {
    check.steps.push_back(
        MakeStep(PhaseKind::kPreflight, node.name, StepKind::kCheck, "check " + node.name));
    Step& step = launch.steps.emplace_back(
        MakeStep(PhaseKind::kLaunch, node.name, StepKind::kLaunchAgent, "launch " + node.name));
    step.launch.emplace();
    step.launch->node = node.name;
    step.launch->log_dir = node.workdir + "/logs";
    step.launch->program = {"train"};
  }
  return plan;
}

class ExecutorTest : public ::testing::Test {
 protected:
  ExecutorTest()
      : connections_(&world_) {}

  ApplyResult Apply(const ClusterSpec& spec, const Plan& plan, ApplyOptions options = {}) {
    reporter_ = std::make_unique<RecordingReporter>();
    Executor executor(spec, plan, source_, options, *reporter_, connections_);
    return executor.Run();
  }

  // An agent binary for apply to ship: a shell script in the test's
  // temporary folder.
  static std::string FakeAgent(const std::string& name) {
    std::string path = absl::StrCat(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp",
                                    "/", name);
    EXPECT_THAT(WriteFileAtomic(path, "#!/bin/sh\n", 0755), IsOk());
    return path;
  }

  World world_;
  FakeConnections connections_;
  Manifest source_;
  std::unique_ptr<RecordingReporter> reporter_;
};

TEST_F(ExecutorTest, PhasesRunInOrderWithABarrier) {
  ClusterSpec spec = Spec(3);
  Plan plan = CheckAndLaunchPlan(spec);
  world_.reply = [](const std::string& node, const std::string& command) {
    Reply reply;
    // Node c's check is slow: no launch may start before it ends.
    if (command == "check c") reply.delay = absl::Milliseconds(200);
    return reply;
  };
  ApplyResult result = Apply(spec, plan);
  ASSERT_EQ(result.exit_code, 0) << result.message;
  absl::Time last_check_end = world_.spans["c: check c"].second;
  for (const char* node : {"a", "b", "c"}) {
    EXPECT_GE(world_.spans[absl::StrCat(node, ": launch ", node)].first, last_check_end)
        << node;
  }
  EXPECT_THAT(reporter_->Events("preflight"),
              ElementsAre("a preflight changed", "b preflight changed",
                          "c preflight changed"));
  EXPECT_THAT(reporter_->Events("launch"),
              ElementsAre("a launch changed", "b launch changed", "c launch changed"));
}

TEST_F(ExecutorTest, ParallelismBoundIsHonoured) {
  ClusterSpec spec = Spec(6);
  Plan plan = CheckAndLaunchPlan(spec);
  plan.phases.pop_back();
  world_.reply = [](const std::string&, const std::string&) {
    Reply reply;
    reply.delay = absl::Milliseconds(60);
    return reply;
  };
  ApplyOptions options;
  options.parallelism = 2;
  ApplyResult result = Apply(spec, plan, options);
  ASSERT_EQ(result.exit_code, 0) << result.message;
  EXPECT_EQ(world_.max_running, 2);
  EXPECT_EQ(world_.runs.size(), 6u);
}

TEST_F(ExecutorTest, RecordedStepsAreSkippedUnlessForced) {
  ClusterSpec spec = Spec(2);
  Plan plan = CheckAndLaunchPlan(spec);
  ASSERT_EQ(Apply(spec, plan).exit_code, 0);
  EXPECT_EQ(world_.files["/w/a/.fleetplan/nodes/a/steps/preflight"],
            plan.phases[0].steps[0].hash + "\n");
  ASSERT_EQ(world_.runs.size(), 4u);

  ASSERT_EQ(Apply(spec, plan).exit_code, 0);
  EXPECT_EQ(world_.runs.size(), 4u) << "nothing runs again";
  EXPECT_THAT(reporter_->Events("preflight"),
              ElementsAre("a preflight unchanged", "b preflight unchanged"));
  EXPECT_THAT(reporter_->Events("launch"),
              ElementsAre("a launch unchanged", "b launch unchanged"));

  // A changed check runs again, on every node (preflight runs on all of
  // them or none), and so does the job that depends on it.
  plan.phases[0].steps[1].hash = "new";
  ASSERT_EQ(Apply(spec, plan).exit_code, 0);
  EXPECT_THAT(reporter_->Events("preflight"),
              ElementsAre("a preflight changed", "b preflight changed"));
  EXPECT_THAT(reporter_->Events("launch"),
              ElementsAre("a launch changed", "b launch changed"));
  EXPECT_EQ(world_.runs.size(), 8u);

  ApplyOptions force;
  force.force = true;
  ASSERT_EQ(Apply(spec, plan, force).exit_code, 0);
  EXPECT_EQ(world_.runs.size(), 12u);
}

TEST_F(ExecutorTest, SecretsGoToAPrivateFileAndAChangedValueRelaunches) {
  ClusterSpec spec = Spec(1);
  SecretSpec secret;
  secret.name = "TOKEN";
  spec.secrets = {secret};
  Plan plan = CheckAndLaunchPlan(spec);
  Phase env;
  env.kind = PhaseKind::kEnvironment;
  Step& write = env.steps.emplace_back(
      MakeStep(PhaseKind::kEnvironment, "a", StepKind::kWriteEnv, ""));
  write.path = "/w/a/.fleetplan/nodes/a/env.sh";
  write.content = "export X=1\n";
  plan.phases.insert(plan.phases.begin(), env);
  ApplyOptions options;
  options.secret_values = {{"TOKEN", "value-one"}};
  options.secrets_digest = "digest-one";
  const std::string secrets = "/w/a/.fleetplan/nodes/a/secrets.env";
  ASSERT_EQ(Apply(spec, plan, options).exit_code, 0);
  EXPECT_THAT(world_.files[secrets], HasSubstr("export TOKEN=value-one\n"));
  EXPECT_EQ(world_.modes[secrets], 0600u);
  EXPECT_EQ(world_.modes[write.path], 0600u);
  std::string record = world_.files["/w/a/.fleetplan/nodes/a/steps/environment"];
  EXPECT_THAT(record, Not(HasSubstr("value-one")));
  EXPECT_THAT(record, Not(HasSubstr(write.hash)));

  ASSERT_EQ(Apply(spec, plan, options).exit_code, 0);
  EXPECT_THAT(reporter_->Events("environment"), ElementsAre("a environment unchanged"));
  EXPECT_THAT(reporter_->Events("launch"), ElementsAre("a launch unchanged"));

  // Only the digest tells the executor the value changed.
  options.secret_values = {{"TOKEN", "value-two"}};
  options.secrets_digest = "digest-two";
  ASSERT_EQ(Apply(spec, plan, options).exit_code, 0);
  EXPECT_THAT(reporter_->Events("environment"), ElementsAre("a environment changed"));
  EXPECT_THAT(reporter_->Events("launch"), ElementsAre("a launch changed"));
  EXPECT_THAT(world_.files[secrets], HasSubstr("export TOKEN=value-two\n"));
}

TEST_F(ExecutorTest, RunAgainReusesTheConnectionsAndSkipsWhatIsRecorded) {
  ClusterSpec spec = Spec(2);
  Plan plan = CheckAndLaunchPlan(spec);
  RecordingReporter reporter;
  Executor executor(spec, plan, source_, {}, reporter, connections_);
  ASSERT_THAT(executor.Connect(), IsOk());
  ASSERT_THAT(executor.Connect(), IsOk());
  EXPECT_EQ(world_.connections, 2);
  ASSERT_EQ(executor.Run().exit_code, 0);
  ASSERT_EQ(world_.runs.size(), 4u);
  ASSERT_EQ(executor.Run().exit_code, 0);
  EXPECT_EQ(world_.connections, 2) << "no connection opened again";
  EXPECT_EQ(world_.runs.size(), 4u) << "nothing runs again";
  EXPECT_THAT(reporter.Events("launch"),
              ElementsAre("a launch changed", "a launch unchanged", "b launch changed",
                          "b launch unchanged"));
}

TEST_F(ExecutorTest, ReadNodeStatesReadsRecordsAndANodeNotCreatedYetHoldsNothing) {
  ClusterSpec spec = Spec(2);
  spec.nodes[1].address = "not-created";
  Plan plan = CheckAndLaunchPlan(spec);
  const std::string& check_a = plan.phases[0].steps[0].hash;
  world_.files["/w/a/.fleetplan/nodes/a/steps/preflight"] = check_a + "\n";
  source_.entries.push_back({"train.py", 12, 0644, "d1"});
  source_.entries.push_back({"data/x.bin", 30, 0644, "d2"});
  world_.files["/w/a/.fleetplan/nodes/a/manifest"] =
      SerializeManifest(Manifest{{source_.entries[0]}});
  ApplyOptions options;
  options.transport.read_only = true;
  RecordingReporter reporter;
  Executor executor(spec, plan, source_, options, reporter, connections_);

  FP_ASSERT_OK_AND_ASSIGN(auto states, executor.ReadNodeStates());
  const NodeState& a = states.at("a");
  EXPECT_EQ(a.records.at(PhaseKind::kPreflight), check_a);
  EXPECT_EQ(a.records.count(PhaseKind::kLaunch), 0u);
  EXPECT_TRUE(a.tree_recorded);
  EXPECT_EQ(a.files_to_send, 1);
  EXPECT_EQ(a.bytes_to_send, 30u);
  const NodeState& b = states.at("b");
  EXPECT_THAT(b.records, IsEmpty());
  EXPECT_FALSE(b.tree_recorded);
  EXPECT_EQ(b.files_to_send, 2);
  EXPECT_EQ(b.bytes_to_send, 42u);
  EXPECT_THAT(world_.runs, IsEmpty()) << "reading runs nothing";

  // Anything but reading needs every node there.
  ApplyResult result = Apply(spec, plan, options);
  EXPECT_EQ(result.exit_code, kExitApplyFailed);
  EXPECT_THAT(result.message, HasSubstr("cannot connect to node 'b'"));
}

TEST_F(ExecutorTest, FailureStopsLaterPhasesAndNamesEverything) {
  ClusterSpec spec = Spec(3);
  Plan plan = CheckAndLaunchPlan(spec);
  world_.reply = [](const std::string& node, const std::string& command) {
    Reply reply;
    if (command == "check b") {
      reply.status = 3;
      for (int i = 1; i <= 30; ++i) absl::StrAppend(&reply.output, "line ", i, "\n");
      reply.output += "disk full";
    }
    return reply;
  };
  ApplyResult result = Apply(spec, plan);
  EXPECT_EQ(result.exit_code, kExitApplyFailed);
  EXPECT_THAT(result.message, HasSubstr("node 'b'"));
  EXPECT_THAT(result.message, HasSubstr("phase preflight"));
  EXPECT_THAT(result.message, HasSubstr("check b"));
  EXPECT_THAT(result.message, HasSubstr("status 3"));
  EXPECT_THAT(result.message, HasSubstr("disk full"));
  EXPECT_THAT(result.message, HasSubstr("line 30"));
  EXPECT_THAT(result.message, ::testing::Not(HasSubstr("line 5\n")));
  for (const std::string& run : world_.runs) {
    EXPECT_FALSE(absl::StrContains(run, "launch")) << run;
  }
  EXPECT_EQ(world_.files.count("/w/b/.fleetplan/nodes/b/steps/preflight"), 0u);
  EXPECT_THAT(reporter_->Events("launch"), IsEmpty());
}

TEST_F(ExecutorTest, AFailedJobIsNamedAsTheChiefRecordedIt) {
  ClusterSpec spec = Spec(3);
  Plan plan = CheckAndLaunchPlan(spec);
  world_.agent = [](const std::string& node, const std::string&) {
    Reply reply;
    if (node == "b") reply.output = "[b/3] boom\n";
    return reply;
  };
  world_.end_phase = JobPhase::kFailed;
  world_.end_failure = JobFailure{"b", 3, 1, ""};
  world_.end_status = 1;
  ApplyResult result = Apply(spec, plan);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.message, "rank 3 on node 'b' failed with exit status 1");
  EXPECT_THAT(reporter_->Events("launch"),
              ElementsAre("a launch changed", "b launch changed", "c launch changed"));
  EXPECT_THAT(reporter_->lines(), ElementsAre("b| [b/3] boom"));
  // Every launch told its agent the same run id.
  EXPECT_THAT(world_.run_id, testing::StartsWith("2"));
  EXPECT_THAT(world_.follows, testing::UnorderedElementsAre("a", "b", "c"));
}

TEST_F(ExecutorTest, ALaunchThatFailsStopsWhatStartedAndIsNamed) {
  ClusterSpec spec = Spec(3);
  Plan plan = CheckAndLaunchPlan(spec);
  world_.reply = [](const std::string&, const std::string& command) {
    Reply reply;
    if (command == "launch b") {
      reply.status = 1;
      reply.output = "cannot reach the coordinator\n";
    }
    return reply;
  };
  ApplyResult result = Apply(spec, plan);
  EXPECT_EQ(result.exit_code, kExitApplyFailed);
  EXPECT_THAT(result.message, HasSubstr("node 'b', phase launch, step launch-agent: command "
                                        "exited with status 1"));
  EXPECT_THAT(result.message, HasSubstr("cannot reach the coordinator"));
  // b's agent never started: nothing of the job is there to stop.
  EXPECT_THAT(world_.stops, testing::UnorderedElementsAre("a", "c"));
  EXPECT_THAT(world_.follows, IsEmpty());
  EXPECT_EQ(world_.files.count("/w/b/.fleetplan/nodes/b/steps/launch"), 0u);
}

TEST_F(ExecutorTest, ALostConnectionWhileFollowingDetachesAndLeavesTheJob) {
  ClusterSpec spec = Spec(3);
  Plan plan = CheckAndLaunchPlan(spec);
  world_.agent = [](const std::string& node, const std::string&) {
    Reply reply;
    if (node == "b") {
      reply.delay = absl::Milliseconds(50);
      reply.lost = true;
    } else {
      reply.until_cancelled = true;
    }
    return reply;
  };
  ApplyOptions options;
  options.logs_command = "LOGS";
  ApplyResult result = Apply(spec, plan, options);
  EXPECT_EQ(result.exit_code, kExitDetached);
  EXPECT_THAT(result.message,
              HasSubstr("lost the connection to node 'b' (connection lost while running a "
                        "command); run "));
  EXPECT_THAT(result.message, HasSubstr(" goes on without apply. Follow it with LOGS"));
  EXPECT_THAT(world_.stops, IsEmpty()) << "a lost connection is no request to stop";
}

// An elastic job goes on without a lost worker, and so does apply: it
// follows the others to the job's end and says how it ended.
TEST_F(ExecutorTest, ALostWorkerOfAnElasticJobIsNoReasonToDetach) {
  ClusterSpec spec = Spec(3);
  spec.job.min_nodes = 2;
  Plan plan = CheckAndLaunchPlan(spec);
  world_.agent = [](const std::string& node, const std::string&) {
    Reply reply;
    if (node == "b") {
      reply.delay = absl::Milliseconds(50);
      reply.lost = true;
    } else if (node == "a") {
      reply.delay = absl::Seconds(6);  // past the 5 s a job of every node waits
    } else {
      reply.until_cancelled = true;
    }
    return reply;
  };
  ApplyResult result = Apply(spec, plan);
  EXPECT_EQ(result.exit_code, 0) << result.message;
  EXPECT_THAT(world_.stops, IsEmpty());
}

TEST_F(ExecutorTest, AJobThatFailedIsLaunchedAgainEvenAfterAnEarlierSuccess) {
  ClusterSpec spec = Spec(2);
  Plan plan = CheckAndLaunchPlan(spec);
  ASSERT_EQ(Apply(spec, plan).exit_code, 0);
  world_.end_phase = JobPhase::kFailed;
  world_.end_failure = JobFailure{"b", 1, 1, ""};
  world_.end_status = 1;
  ApplyOptions force;
  force.force = true;
  ASSERT_EQ(Apply(spec, plan, force).exit_code, 1);

  world_.end_phase = JobPhase::kSucceeded;
  world_.end_failure.reset();
  world_.end_status = 0;
  world_.runs.clear();
  ASSERT_EQ(Apply(spec, plan).exit_code, 0);
  EXPECT_THAT(reporter_->Events("launch"), ElementsAre("a launch changed", "b launch changed"));
  EXPECT_THAT(world_.runs, Contains("b: launch b"));
}

TEST_F(ExecutorTest, DetachReturnsOnceTheRanksStartedNamingTheRun) {
  ClusterSpec spec = Spec(2);
  Plan plan = CheckAndLaunchPlan(spec);
  ApplyOptions options;
  options.detach = true;
  options.status_command = "STATUS";
  ApplyResult result = Apply(spec, plan, options);
  ASSERT_EQ(result.exit_code, 0) << result.message;
  // The run's id reached the agents as a field of their launch request.
  EXPECT_FALSE(world_.run_id.empty());
  EXPECT_THAT(result.note, HasSubstr(absl::StrCat("run ", world_.run_id, " started on 2 nodes; "
                                                  "it runs without apply")));
  EXPECT_THAT(result.note, HasSubstr("see it with STATUS"));
  EXPECT_THAT(world_.follows, IsEmpty());
  EXPECT_EQ(world_.files.count("/w/b/.fleetplan/nodes/b/steps/launch"), 1u);
}

// The chief's job.json says a job of this spec runs.
void MarkRunning(World& world) {
  NodeJobState running;
  running.run_id = "r-running";
  running.node = "a";
  running.phase = JobPhase::kRunning;
  running.updated_at = absl::Now();
  running.generation = 1;
  world.files[JobJsonPath("a")] = JobStateToJson(running);
}

TEST_F(ExecutorTest, ARunningJobWithNothingChangedIsLeftAlone) {
  ClusterSpec spec = Spec(2);
  Plan plan = CheckAndLaunchPlan(spec);
  ApplyOptions detach;
  detach.detach = true;
  ASSERT_EQ(Apply(spec, plan, detach).exit_code, 0);
  MarkRunning(world_);
  world_.runs.clear();
  ApplyResult result = Apply(spec, plan);
  EXPECT_EQ(result.exit_code, 0) << result.message;
  EXPECT_THAT(result.note, HasSubstr("run r-running of this spec is running (generation 1"));
  EXPECT_THAT(result.note, HasSubstr("nothing changed, nothing to do"));
  EXPECT_THAT(world_.runs, IsEmpty());
  EXPECT_THAT(world_.follows, IsEmpty());
}

TEST_F(ExecutorTest, ARunningJobRefusesAChangeUnlessReplaced) {
  ClusterSpec spec = Spec(2);
  Plan plan = CheckAndLaunchPlan(spec);
  ApplyOptions detach;
  detach.detach = true;
  ASSERT_EQ(Apply(spec, plan, detach).exit_code, 0);
  MarkRunning(world_);
  world_.runs.clear();
  plan.phases[1].steps[1].hash = "changed";
  ApplyOptions options;
  options.stop_command = "STOP";
  ApplyResult result = Apply(spec, plan, options);
  EXPECT_EQ(result.exit_code, kExitApplyFailed);
  EXPECT_THAT(result.message, HasSubstr("run r-running of this spec is running"));
  EXPECT_THAT(result.message, HasSubstr("launch on b). Stop it first"));
  EXPECT_THAT(result.message, HasSubstr("Stop it first with STOP, or apply with --replace"));
  EXPECT_THAT(world_.runs, IsEmpty());

  options.replace = true;
  result = Apply(spec, plan, options);
  EXPECT_EQ(result.exit_code, 0) << result.message;
  EXPECT_THAT(world_.stops, testing::UnorderedElementsAre("a", "b"));
  EXPECT_THAT(world_.runs, Contains("b: launch b"));
}

TEST_F(ExecutorTest, AJobWhoseAgentDiedIsNotTakenForRunning) {
  ClusterSpec spec = Spec(1);
  Plan plan = CheckAndLaunchPlan(spec);
  NodeJobState stale;
  stale.run_id = "r-old";
  stale.phase = JobPhase::kRunning;
  stale.updated_at = absl::Now() - absl::Minutes(5);
  world_.files[JobJsonPath("a")] = JobStateToJson(stale);
  plan.phases[1].steps[0].hash = "changed";
  EXPECT_EQ(Apply(spec, plan).exit_code, 0);
}

TEST_F(ExecutorTest, InterruptCancelsAndExits130) {
  ClusterSpec spec = Spec(2);
  Plan plan = CheckAndLaunchPlan(spec);
  world_.agent = [](const std::string&, const std::string& what) {
    Reply reply;
    reply.until_cancelled = what == "follow";
    return reply;
  };
  reporter_ = std::make_unique<RecordingReporter>();
  Executor executor(spec, plan, source_, ApplyOptions(), *reporter_, connections_);
  std::thread interrupter([&] {
    absl::SleepFor(absl::Milliseconds(100));
    executor.Interrupt();
  });
  ApplyResult result = executor.Run();
  interrupter.join();
  EXPECT_EQ(result.exit_code, kExitInterrupted);
  // An explicit request: the job is stopped on every node.
  EXPECT_THAT(world_.stops, testing::UnorderedElementsAre("a", "b"));
  EXPECT_EQ(result.message, "interrupted; the job was stopped on every node");
}

TEST_F(ExecutorTest, UnreachableNodeFailsBeforeAnythingRuns) {
  ClusterSpec spec = Spec(2);
  spec.nodes[1].address = "unreachable";
  ApplyResult result = Apply(spec, CheckAndLaunchPlan(spec));
  EXPECT_EQ(result.exit_code, kExitApplyFailed);
  EXPECT_THAT(result.message, HasSubstr("cannot connect to node 'b'"));
  EXPECT_THAT(result.message, HasSubstr("no route to host"));
  EXPECT_THAT(world_.runs, IsEmpty());
}

TEST_F(ExecutorTest, AgentIsSyncedBySyncStepsWithoutASourceAndOnlyOnce) {
  std::string agent = FakeAgent("fake-agent");
  ClusterSpec spec = Spec(2);
  Plan plan;
  plan.phases.push_back(AgentSyncPhase(spec));
  ApplyOptions options;
  options.agent_path = agent;
  ASSERT_EQ(Apply(spec, plan, options).exit_code, 0);
  EXPECT_THAT(world_.sent, ::testing::UnorderedElementsAre(
                               "a: .fleetplan/bin/fleetplan-agent",
                               "b: .fleetplan/bin/fleetplan-agent"));
  EXPECT_EQ(world_.files["/w/a/.fleetplan/bin/fleetplan-agent"], "#!/bin/sh\n");
  EXPECT_THAT(reporter_->Events("sync"), ElementsAre("a sync changed", "b sync changed"));
  ASSERT_EQ(Apply(spec, plan, options).exit_code, 0);
  EXPECT_EQ(world_.sent.size(), 2u);
  EXPECT_THAT(reporter_->Events("sync"),
              ElementsAre("a sync unchanged", "b sync unchanged"));
}

TEST_F(ExecutorTest, NodesWhoseAgentServesASessionAreSyncedAndCheckedThroughIt) {
  std::string agent = FakeAgent("fake-agent");
  ClusterSpec spec = Spec(2);
  Plan plan;
  plan.phases.push_back(AgentSyncPhase(spec));
  ApplyOptions options;
  options.agent_path = agent;
  // The first apply ships the agent: no node serves a session yet.
  ASSERT_EQ(Apply(spec, plan, options).exit_code, 0);
  EXPECT_THAT(world_.runs, Contains(HasSubstr(" verify-tree ")));
  EXPECT_THAT(world_.session_requests, IsEmpty());
  // An agent that changed is sent again, now through each node's session,
  // and checked there; no command runs on the nodes.
  world_.agent_sessions = true;
  world_.runs.clear();
  ASSERT_THAT(WriteFileAtomic(agent, "#!/bin/sh\n# new\n", 0755), IsOk());
  ASSERT_EQ(Apply(spec, plan, options).exit_code, 0);
  EXPECT_THAT(world_.runs, IsEmpty());
  EXPECT_THAT(world_.session_requests,
              ::testing::UnorderedElementsAre("a: workdir", "a: verify", "b: workdir",
                                              "b: verify"));
  EXPECT_EQ(world_.files["/w/b/.fleetplan/bin/fleetplan-agent"], "#!/bin/sh\n# new\n");
  EXPECT_THAT(reporter_->Events("sync"), ElementsAre("a sync changed", "b sync changed"));
}

TEST_F(ExecutorTest, ChiefKeyIsAuthorizedOnTheOthers) {
  ClusterSpec spec = Spec(3);
  Plan plan;
  Phase& keys = plan.phases.emplace_back();
  keys.kind = PhaseKind::kKeys;
  keys.steps.push_back(MakeStep(PhaseKind::kKeys, "b", StepKind::kAuthorizeKey, ""));
  keys.steps.push_back(MakeStep(PhaseKind::kKeys, "a", StepKind::kEnsureKey, "ensure"));
  keys.steps.push_back(MakeStep(PhaseKind::kKeys, "c", StepKind::kAuthorizeKey, ""));
  // As CompilePlan orders them: the authorize steps after ensure-key.
  keys.steps[0].wave = keys.steps[2].wave = 1;
  world_.reply = [](const std::string&, const std::string& command) {
    Reply reply;
    if (command == "ensure") reply.output = "Generating...\nssh-ed25519 AAAAC3Nza chief@a\n";
    return reply;
  };
  ASSERT_EQ(Apply(spec, plan).exit_code, 0);
  ASSERT_EQ(world_.runs.size(), 3u);
  EXPECT_EQ(world_.runs[0], "a: ensure");
  EXPECT_THAT(world_.runs[1], HasSubstr("ssh-ed25519 AAAAC3Nza chief@a"));
  EXPECT_THAT(world_.runs[2], HasSubstr("authorized_keys"));
  ASSERT_EQ(Apply(spec, plan).exit_code, 0);
  EXPECT_EQ(world_.runs.size(), 4u) << "only ensure-key runs again";
  EXPECT_THAT(reporter_->Events("keys"),
              ElementsAre("a keys unchanged", "b keys unchanged", "c keys unchanged"));
}

TEST_F(ExecutorTest, EveryNodeIsCheckedAndEveryFailedCheckIsNamed) {
  ClusterSpec spec = Spec(3);
  Plan plan = CheckAndLaunchPlan(spec);
  world_.reply = [](const std::string& node, const std::string& command) {
    Reply reply;
    if (command == "check a") reply.output = "fleetplan-check workdir ok /w/a: writable\n";
    if (command == "check b") {
      reply.output =
          "fleetplan-check workdir fail /w/b: read-only; expected writable; fix: move it\n"
          "fleetplan-check python fail venv /v does not exist; fix: create it\n";
      reply.status = 1;
    }
    if (command == "check c") reply.output = "fleetplan-check gpus fail GPU 3 not found\n";
    return reply;
  };
  ApplyOptions options;
  options.parallelism = 1;  // b's failure must not keep c from being checked
  ApplyResult result = Apply(spec, plan, options);
  EXPECT_EQ(result.exit_code, kExitApplyFailed);
  EXPECT_EQ(result.message,
            "preflight found 3 problems:\n"
            "  node 'b', check workdir: /w/b: read-only; expected writable; fix: move it\n"
            "  node 'b', check python: venv /v does not exist; fix: create it\n"
            "  node 'c', check gpus: GPU 3 not found");
  EXPECT_THAT(reporter_->Events("preflight"),
              ElementsAre("a preflight changed", "b preflight failed", "c preflight failed"));
  EXPECT_THAT(reporter_->Events("launch"), IsEmpty());
  for (const std::string& run : world_.runs) EXPECT_THAT(run, Not(HasSubstr("launch")));
  ASSERT_EQ(reporter_->tables().size(), 1u);
  EXPECT_THAT(reporter_->tables()[0], HasSubstr("  b     FAIL     FAIL    -\n"));
  EXPECT_EQ(world_.files.count("/w/a/.fleetplan/nodes/a/steps/preflight"), 0u)
      << "checks are recorded only when all passed";
}

TEST_F(ExecutorTest, AHangingStepIsStoppedAfterTheStepTimeoutAndNamed) {
  ClusterSpec spec = Spec(2);
  Plan plan = CheckAndLaunchPlan(spec);
  world_.reply = [](const std::string&, const std::string& command) {
    Reply reply;
    if (command == "check b") {
      reply.output = "waiting for the mount\n";
      reply.until_cancelled = true;
    }
    return reply;
  };
  ApplyOptions options;
  options.step_timeout = absl::Milliseconds(200);
  absl::Time start = absl::Now();
  ApplyResult result = Apply(spec, plan, options);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(result.exit_code, kExitApplyFailed);
  EXPECT_THAT(result.message,
              HasSubstr("node 'b', phase preflight, step check: still running after 200ms "
                        "(--step-timeout), stopped"));
  EXPECT_THAT(result.message, HasSubstr("waiting for the mount"));
  EXPECT_THAT(reporter_->Events("launch"), IsEmpty());
}

TEST_F(ExecutorTest, TheJobIsNotBoundByTheStepTimeout) {
  ClusterSpec spec = Spec(2);
  Plan plan = CheckAndLaunchPlan(spec);
  world_.agent = [](const std::string&, const std::string&) {
    Reply reply;
    reply.delay = absl::Milliseconds(400);
    return reply;
  };
  ApplyOptions options;
  options.step_timeout = absl::Milliseconds(100);
  ApplyResult result = Apply(spec, plan, options);
  EXPECT_EQ(result.exit_code, 0) << result.message;
  EXPECT_THAT(reporter_->Events("launch"), ElementsAre("a launch changed", "b launch changed"));
}

TEST_F(ExecutorTest, ADifferentLibtorchOnOneNodeStopsBeforeLaunch) {
  ClusterSpec spec = Spec(3);
  Plan plan = CheckAndLaunchPlan(spec);
  world_.reply = [](const std::string& node, const std::string&) {
    Reply reply;
    reply.output = node == "b" ? "fleetplan-fact libtorch 1 2 /opt/libtorch_cpu.so\n"
                               : "fleetplan-fact libtorch 3 4 /usr/lib/libtorch_cpu.so.1.13.0\n";
    return reply;
  };
  ApplyResult result = Apply(spec, plan);
  EXPECT_EQ(result.exit_code, kExitApplyFailed);
  EXPECT_THAT(result.message,
              HasSubstr("node 'b', check libtorch: /opt/libtorch_cpu.so (xxh3 1, 2 bytes); "
                        "the other nodes (a, c) load /usr/lib/libtorch_cpu.so.1.13.0"));
  EXPECT_THAT(reporter_->Events("launch"), IsEmpty());
}

TEST_F(ExecutorTest, TheServingCheckRunsBesideTheOthersUntilTheyEnd) {
  ClusterSpec spec = Spec(3);
  Plan plan = CheckAndLaunchPlan(spec);
  plan.phases[0].steps[0].serves_phase = true;
  world_.reply = [](const std::string& node, const std::string& command) {
    Reply reply;
    if (command == "check a") {
      // The listener: up until its stdin closes, then done.
      reply.output = "fleetplan-check port ok port 1: free\nfleetplan-fact listening 1\n";
      reply.until_cancelled = true;
      reply.cancelled_status = 0;
    } else if (absl::StartsWith(command, "check")) {
      reply.output = "fleetplan-check connect ok connected\n";
      reply.delay = absl::Milliseconds(100);
    }
    return reply;
  };
  ApplyOptions options;
  options.parallelism = 1;  // the chief's check is not counted against it
  ApplyResult result = Apply(spec, plan, options);
  ASSERT_EQ(result.exit_code, 0) << result.message;
  EXPECT_THAT(world_.held_stdin, testing::Contains("a: check a"));
  EXPECT_THAT(world_.held_stdin, Not(testing::Contains("b: check b")));
  absl::Time chief_end = world_.spans["a: check a"].second;
  EXPECT_GE(chief_end, world_.spans["b: check b"].second);
  EXPECT_GE(chief_end, world_.spans["c: check c"].second);
  EXPECT_GE(world_.spans["a: launch a"].first, chief_end);
  EXPECT_THAT(reporter_->Events("preflight"),
              ElementsAre("a preflight changed", "b preflight changed", "c preflight changed"));
}

TEST_F(ExecutorTest, PreflightRunsOnEveryNodeWhenOneLostItsRecord) {
  ClusterSpec spec = Spec(2);
  Plan plan = CheckAndLaunchPlan(spec);
  ASSERT_EQ(Apply(spec, plan).exit_code, 0);
  world_.files.erase("/w/b/.fleetplan/nodes/b/steps/preflight");
  ASSERT_EQ(Apply(spec, plan).exit_code, 0);
  EXPECT_THAT(reporter_->Events("preflight"),
              ElementsAre("a preflight changed", "b preflight changed"));
  // The checks guard the launch: a job that must run again is checked again.
  world_.files.erase("/w/a/.fleetplan/nodes/a/steps/launch");
  ASSERT_EQ(Apply(spec, plan).exit_code, 0);
  EXPECT_THAT(reporter_->Events("preflight"),
              ElementsAre("a preflight changed", "b preflight changed"));
}

TEST_F(ExecutorTest, CheckOnlyRunsEveryCheckAndRecordsNothing) {
  ClusterSpec spec = Spec(2);
  Plan plan = CheckAndLaunchPlan(spec);
  plan.phases.pop_back();
  ASSERT_EQ(Apply(spec, plan).exit_code, 0);
  world_.files.clear();
  ApplyOptions options;
  options.check_only = true;
  ASSERT_EQ(Apply(spec, plan, options).exit_code, 0);
  ASSERT_EQ(Apply(spec, plan, options).exit_code, 0);
  EXPECT_EQ(world_.runs.size(), 6u);
  EXPECT_THAT(world_.files, IsEmpty());
}

TEST_F(ExecutorTest, CheckOnlySkipsANodeNotCreatedYetAndChecksTheOthers) {
  ClusterSpec spec = Spec(2);
  spec.nodes[1].address = "not-created";
  Plan plan = CheckAndLaunchPlan(spec);
  plan.phases.pop_back();
  world_.reply = [](const std::string&, const std::string&) {
    Reply reply;
    reply.output = "fleetplan-check workdir ok /w/a is writable\n";
    return reply;
  };
  ApplyOptions options;
  options.check_only = true;
  RecordingReporter reporter;
  Executor executor(spec, plan, source_, options, reporter, connections_);
  ApplyResult result = executor.Run();
  ASSERT_EQ(result.exit_code, 0) << result.message;
  EXPECT_THAT(world_.runs, ElementsAre("a: check a"));
  EXPECT_THAT(executor.NodesNotThereYet(), ElementsAre("b"));
  ASSERT_EQ(reporter.tables().size(), 1u);
  EXPECT_EQ(reporter.tables()[0],
            "preflight checks\n"
            "  node  workdir  reach\n"
            "  a     ok       -\n"
            "  b     -        skip\n"
            "  skip b reach: no container yet; nothing else checked\n");
}

// Checks fail closed: a node whose every check was a skip (its agent not
// there before the first apply) passed nothing, and the node not created
// yet is said apart.
TEST_F(ExecutorTest, CheckOnlyFailsWhereANodeRanNoCheck) {
  ClusterSpec spec = Spec(3);
  spec.nodes[2].address = "not-created";
  Plan plan = CheckAndLaunchPlan(spec);
  plan.phases.pop_back();
  world_.reply = [](const std::string& node, const std::string&) {
    Reply reply;
    reply.output = node == "a" ? "fleetplan-check workdir ok /w/a is writable\n"
                               : "fleetplan-check agent skip not on this node yet\n";
    return reply;
  };
  ApplyOptions options;
  options.check_only = true;
  RecordingReporter reporter;
  Executor executor(spec, plan, source_, options, reporter, connections_);
  ApplyResult result = executor.Run();
  EXPECT_EQ(result.exit_code, kExitApplyFailed);
  EXPECT_EQ(result.message, "no check could run on node 'b': not on this node yet");
  EXPECT_THAT(executor.NodesNotThereYet(), ElementsAre("c"));
}

TEST_F(ExecutorTest, SyncChecksTheWorkdirBeforeSendingAnything) {
  std::string agent = FakeAgent("fake-agent-2");
  ClusterSpec spec = Spec(2);
  Plan plan = CheckAndLaunchPlan(spec);
  plan.phases.insert(plan.phases.begin(), AgentSyncPhase(spec));
  world_.reply = [](const std::string& node, const std::string& command) {
    Reply reply;
    if (absl::StrContains(command, "fp_w=/w/b\n")) {
      reply.output =
          "fleetplan-check workdir fail /w/b: cannot be created (Read-only file system)\n";
      reply.status = 1;
    }
    return reply;
  };
  ApplyOptions options;
  options.agent_path = agent;
  ApplyResult result = Apply(spec, plan, options);
  EXPECT_EQ(result.exit_code, kExitApplyFailed);
  EXPECT_EQ(result.message,
            "node 'b', phase sync: workdir: /w/b: cannot be created (Read-only file system)");
  EXPECT_THAT(world_.sent, ElementsAre("a: .fleetplan/bin/fleetplan-agent"));
  EXPECT_THAT(reporter_->Events("preflight"), IsEmpty());
  ASSERT_EQ(reporter_->tables().size(), 1u);
  EXPECT_THAT(reporter_->tables()[0], HasSubstr("FAIL b workdir: /w/b: cannot be created"));
}

}  // namespace
}  // namespace fleetplan
