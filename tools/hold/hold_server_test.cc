#include "tools/hold/hold_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "tools/apply/agent_session.h"
#include "tools/apply/pipe_stream_testing.h"
#include "tools/hold/unix_socket.h"
#include "tools/process/files.h"
#include "tools/protocol/hold_wire.h"

namespace fleetplan {
namespace {

// A node in memory: its files, and commands that print their text.
struct NodeFiles {
  absl::Mutex mu;
  std::map<std::string, std::string> files;
  std::atomic<int> streams{0};  // command streams opened: agents started
};

class FakeNode : public Connection {
 public:
  explicit FakeNode(NodeFiles& node) : node_(node) {}
  absl::StatusOr<int> Run(const CommandSpec& command, const OutputCallback& on_output,
                          const absl::Notification* cancel) override {
    if (command.command == "wait") {
      while (!cancel->WaitForNotificationWithTimeout(absl::Seconds(10))) {
      }
      return 143;
    }
    std::string env;
    for (const auto& [name, value] : command.env) env += " " + name + "=" + value;
    on_output("ran " + command.command + " in " + command.cwd + env + "\n");
    return 3;
  }
  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    absl::MutexLock lock(&node_.mu);
    auto found = node_.files.find(path);
    if (found == node_.files.end()) return absl::NotFoundError(path);
    return found->second;
  }
  absl::Status WriteFile(const std::string& path, absl::string_view content,
                         uint32_t mode) override {
    absl::MutexLock lock(&node_.mu);
    node_.files[path] = std::string(content);
    return absl::OkStatus();
  }
  absl::Status PutFiles(const std::vector<FileToSend>& files,
                        const std::string& root) override {
    for (const FileToSend& file : files) {
      std::ifstream in(file.local_path, std::ios::binary);
      std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      absl::MutexLock lock(&node_.mu);
      node_.files[root + "/" + file.path] = content;
    }
    return absl::OkStatus();
  }
  absl::Status RemoveFiles(const std::string& root,
                           const std::vector<std::string>& paths) override {
    absl::MutexLock lock(&node_.mu);
    for (const std::string& path : paths) node_.files.erase(root + "/" + path);
    return absl::OkStatus();
  }
  // On this machine: the node's agent is a real one.
  absl::StatusOr<std::unique_ptr<CommandStream>> OpenStream(const std::string& command) override {
    ++node_.streams;
    return std::make_unique<PipeStream>(command);
  }

 private:
  NodeFiles& node_;
};

class HoldServerTest : public ::testing::Test {
 protected:
  HoldServerTest()
      : pool_([this](const std::string& node, const TransportOptions&)
                  -> absl::StatusOr<std::unique_ptr<Connection>> {
          if (node != "a") return absl::UnavailableError("no route to " + node);
          return std::make_unique<FakeNode>(node_);
        }) {
    set_.nodes["a"] = HoldKey{"identity-a", absl::Minutes(1)};
    spool_ = testing::TempDir();
  }

  ~HoldServerTest() override {
    for (std::thread& server : servers_) server.join();
  }

  // A command's session with a server of `uid` over a socketpair.
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> Attach(HoldAttach attach,
                                                                 uid_t uid = geteuid()) {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    servers_.emplace_back([this, fd = fds[1], uid] {
      HoldServer server(set_, pool_, spool_, uid);
      quit_ |= server.Serve(fd);
    });
    SessionEndpoint endpoint;
    endpoint.open = [fd = fds[0], attach]() -> absl::StatusOr<std::unique_ptr<CommandStream>> {
      auto stream = std::make_unique<SocketStream>(fd);
      if (absl::Status sent = stream->Write(EncodeAttach(attach)); !sent.ok()) return sent;
      return std::unique_ptr<CommandStream>(std::move(stream));
    };
    endpoint.greeting = kHoldGreeting;
    endpoint.name = "the holder";
    endpoint.session = "the holder's session";
    return AgentSessionConnection::Attach(std::move(endpoint), attach.node, absl::Seconds(5));
  }

  HoldAttach AttachA() { return HoldAttach{"a", "identity-a", 5, false}; }

  // AttachA, the node's agent at `agent_path`.
  HoldAttach AttachWithAgent(const std::string& agent_path) {
    HoldAttach attach = AttachA();
    attach.agent_path = agent_path;
    return attach;
  }

  // The command leaves, and the server gives the connection back.
  void Detach(std::unique_ptr<AgentSessionConnection>& held) {
    held.reset();
    servers_.back().join();
    servers_.pop_back();
  }

  // "STATUS: OUTPUT" of `command` run through `node`.
  static std::string Ran(Connection& node, const CommandSpec& command) {
    std::string output;
    absl::StatusOr<int> status = node.Run(
        command, [&](absl::string_view chunk) { output.append(chunk.data(), chunk.size()); },
        nullptr);
    if (!status.ok()) return std::string(status.status().message());
    return absl::StrCat(*status, ": ", output);
  }

  NodeFiles node_;
  HoldSet set_;
  NodePool pool_;
  std::string spool_;
  std::vector<std::thread> servers_;
  bool quit_ = false;
};

TEST_F(HoldServerTest, ServesEveryRequestOnTheNodesConnection) {
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> held = Attach(AttachA());
  ASSERT_TRUE(held.ok()) << held.status();
  Connection& node = **held;
  ASSERT_TRUE(node.WriteFile("/w/x", "hello", 0600).ok());
  EXPECT_EQ(node.ReadFile("/w/x").value_or("?"), "hello");
  EXPECT_TRUE(absl::IsNotFound(node.ReadFile("/w/none").status()));

  std::string output;
  CommandSpec command{"true", {{"A", "1"}}, "/w"};
  absl::StatusOr<int> status =
      node.Run(command, [&](absl::string_view chunk) { output.append(chunk.data(), chunk.size()); }, nullptr);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(*status, 3);
  EXPECT_EQ(output, "ran true in /w A=1\n");

  std::string local = testing::TempDir() + "/hold_put_source";
  std::ofstream(local) << std::string(3 << 20, 'z');  // several data frames
  ASSERT_TRUE(node.PutFiles({{local, "sub/big", 0644, 3u << 20}}, "/w").ok());
  {
    absl::MutexLock lock(&node_.mu);
    EXPECT_TRUE(node_.files["/w/sub/big"] == std::string(3 << 20, 'z'));
  }
  ASSERT_TRUE(node.RemoveFiles("/w", {"sub/big"}).ok());
  EXPECT_TRUE(absl::IsNotFound(node.ReadFile("/w/sub/big").status()));
}

TEST_F(HoldServerTest, ACancelStopsARunningCommand) {
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> held = Attach(AttachA());
  ASSERT_TRUE(held.ok()) << held.status();
  absl::Notification cancel;
  std::thread canceller([&] {
    absl::SleepFor(absl::Milliseconds(100));
    cancel.Notify();
  });
  absl::StatusOr<int> status = (*held)->Run(CommandSpec{"wait"}, nullptr, &cancel);
  canceller.join();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(*status, 143);
}

TEST_F(HoldServerTest, ANextCommandFindsTheConnectionOpen) {
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::unique_ptr<AgentSessionConnection>> held = Attach(AttachA());
    ASSERT_TRUE(held.ok()) << held.status();
    EXPECT_TRUE((*held)->WriteFile("/w/x", "1", 0600).ok());
    held->reset();
    servers_.back().join();
    servers_.pop_back();
  }
  EXPECT_EQ(pool_.opened(), 1);
}

std::string Agent() {
  return absl::StrCat(getenv("TEST_SRCDIR"), "/fleetplan/tools/agent/fleetplan-agent");
}

// What a command run by the node's agent prints of its parent.
constexpr char kParent[] = " by $(cat /proc/$PPID/comm)";

TEST_F(HoldServerTest, CommandsRunThroughTheNodesAgentStartedOnce) {
  std::string dir = testing::TempDir() + "workdir";
  ASSERT_TRUE(MakeDirs(dir).ok());
  CommandSpec command{absl::StrCat("echo \"$GREETING in $(pwd)", kParent, "\"; echo oops >&2; exit 3"),
                      {{"GREETING", "hi"}}, dir};
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::unique_ptr<AgentSessionConnection>> held =
        Attach(AttachWithAgent(Agent()));
    ASSERT_TRUE(held.ok()) << held.status();
    EXPECT_EQ(Ran(**held, command),
              absl::StrCat("3: hi in ", dir, " by fleetplan-agent\noops\n"));
    Detach(*held);
  }
  // One connection, one agent: the second command started nothing.
  EXPECT_EQ(pool_.opened(), 1);
  EXPECT_EQ(node_.streams.load(), 1);
}

TEST_F(HoldServerTest, WithoutAnAgentTheConnectionServesAndTheAgentIsLookedForAfterAWrite) {
  std::string missing = testing::TempDir() + "/no-agent/fleetplan-agent";
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::unique_ptr<AgentSessionConnection>> held =
        Attach(AttachWithAgent(missing));
    ASSERT_TRUE(held.ok()) << held.status();
    EXPECT_EQ(Ran(**held, CommandSpec{"true", {}, "/w"}), "3: ran true in /w\n");
    Detach(*held);
  }
  // It was looked for once, not for every command.
  EXPECT_EQ(node_.streams.load(), 1);
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> held =
      Attach(AttachWithAgent(missing));
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_TRUE((*held)->WriteFile("/w/x", "1", 0600).ok());
  Detach(*held);
  held = Attach(AttachWithAgent(missing));
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_EQ(node_.streams.load(), 2);
}

TEST_F(HoldServerTest, AnAgentWhoseFileWasReplacedIsStartedAgain) {
  std::string agent = testing::TempDir() + "/replaced/fleetplan-agent";
  ASSERT_TRUE(MakeDirs(testing::TempDir() + "/replaced").ok());
  ASSERT_TRUE(CopyFileAtomic(Agent(), agent, 0755).ok());
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> held = Attach(AttachWithAgent(agent));
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_EQ(Ran(**held, CommandSpec{absl::StrCat("echo x", kParent)}), "0: x by fleetplan-agent\n");
  // A sync through the holder ships the agent anew.
  std::string local = testing::TempDir() + "/new-agent";
  ASSERT_TRUE(CopyFileAtomic(Agent(), local, 0755).ok());
  ASSERT_TRUE((*held)->PutFiles({{local, "fleetplan-agent", 0755, 0}},
                                testing::TempDir() + "/replaced")
                  .ok());
  Detach(*held);
  held = Attach(AttachWithAgent(agent));
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_EQ(Ran(**held, CommandSpec{absl::StrCat("echo x", kParent)}), "0: x by fleetplan-agent\n");
  EXPECT_EQ(node_.streams.load(), 2);
  EXPECT_EQ(pool_.opened(), 1);
}

TEST_F(HoldServerTest, TheAgentsOwnChecksAreDoneByTheNodesAgent) {
  std::string dir = testing::TempDir() + "/checked";
  ASSERT_TRUE(MakeDirs(dir + "/.fleetplan").ok());
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> held =
      Attach(AttachWithAgent(Agent()));
  ASSERT_TRUE(held.ok()) << held.status();
  // The hello said so: the command needs no agent of its own.
  EXPECT_TRUE((*held)->agent_behind());
  std::string output;
  absl::StatusOr<int> workdir =
      (*held)->CheckWorkdir(dir, dir + "/.fleetplan", 10, absl::Seconds(30), &output);
  ASSERT_TRUE(workdir.ok()) << workdir.status();
  EXPECT_EQ(*workdir, 0) << output;
  EXPECT_NE(output.find(dir), std::string::npos) << output;
  output.clear();
  absl::StatusOr<int> tree = (*held)->VerifyTree(dir, dir + "/no-manifest", "", "",
                                                 absl::Seconds(30), &output);
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(*tree, 1);
  EXPECT_NE(output.find("cannot check " + dir), std::string::npos) << output;
  // Both by the agent that serves the node's commands: none started for them.
  EXPECT_EQ(node_.streams.load(), 1);
}

TEST_F(HoldServerTest, WithoutAnAgentTheHelloSaysSoAndTheChecksAreRefused) {
  std::string missing = testing::TempDir() + "/no-agent-here/fleetplan-agent";
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> held =
      Attach(AttachWithAgent(missing));
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_FALSE((*held)->agent_behind());
  std::string output;
  absl::StatusOr<int> workdir =
      (*held)->CheckWorkdir("/w", "/w/.fleetplan", 10, absl::Seconds(30), &output);
  // A command asks only where the hello said an agent serves: an error
  // that names the agent, not a check passed.
  ASSERT_FALSE(workdir.ok());
  EXPECT_NE(workdir.status().message().find("no agent at " + missing), std::string::npos)
      << workdir.status();
}

TEST_F(HoldServerTest, RefusesConnectionsMadeForOthers) {
  HoldAttach other = AttachA();
  other.identity = "identity-of-another-user";
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> held = Attach(other);
  EXPECT_TRUE(absl::IsAborted(held.status())) << held.status();
  HoldAttach unknown = AttachA();
  unknown.node = "b";
  EXPECT_TRUE(absl::IsAborted(Attach(unknown).status()));
  EXPECT_EQ(pool_.opened(), 0);
}

TEST_F(HoldServerTest, ReadsNothingFromAProcessOfAnotherUser) {
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> held = Attach(AttachA(), geteuid() + 1);
  EXPECT_FALSE(held.ok());
  EXPECT_EQ(pool_.opened(), 0);
}

TEST_F(HoldServerTest, ANodeThatCannotBeReachedIsReportedAsTheNodeSaid) {
  set_.nodes["b"] = HoldKey{"identity-b", absl::Minutes(1)};
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> held =
      Attach(HoldAttach{"b", "identity-b", 5, false});
  EXPECT_TRUE(absl::IsUnavailable(held.status())) << held.status();
  EXPECT_EQ(held.status().message(), "no route to b");
}

TEST_F(HoldServerTest, QuitsOnlyForItsOwnIdentity) {
  for (const std::string& identity : {std::string("someone else's"), set_.Identity()}) {
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    SocketStream client(fds[0]);
    ASSERT_TRUE(client.Write(EncodeFrame(FrameType::kQuit, {kHoldGreeting, identity})).ok());
    HoldServer server(set_, pool_, spool_, geteuid());
    EXPECT_EQ(server.Serve(fds[1]), identity == set_.Identity());
  }
}

}  // namespace
}  // namespace fleetplan
