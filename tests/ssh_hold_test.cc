// The connection holder end to end (tools/hold): two sshd nodes of the test
// bed, the real commands. A second command reuses the first one's ssh
// sessions (the nodes' sshd session processes stay the same); a spec that
// logs in with another key is not served by the holder of the first; the
// holder leaves after its persist; its folder and socket are the user's
// alone; a killed holder is replaced by the next command without a word;
// exec runs through the node's agent, started once, and the agents end with
// the holder; apply through a warm holder uses that agent as its session.

#include <sys/stat.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/apply_harness.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::Contains;
using ::testing::ContainsRegex;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::SizeIs;

constexpr int kNodes = 2;

class SshHoldTest : public SshTestbedTest {
 protected:
  static void SetUpTestSuite() { StartNodes(kNodes, "fp-hold"); }
  static void TearDownTestSuite() { StopNodes(); }

  void SetUp() override {
    ASSERT_TRUE(ready()) << "the test bed did not start";
    nodes_ = &Nodes();
    dir_ = MakeTempDir();
    // A unix socket's path holds at most 107 bytes: the test's own folder
    // is too deep for one.
    char runtime[] = "/tmp/fp-hold-XXXXXX";
    ASSERT_NE(mkdtemp(runtime), nullptr);
    runtime_ = runtime;
    absl::StatusOr<std::string> keys = HostKeys();
    ASSERT_THAT(keys, IsOk());
    ASSERT_THAT(WriteFileAtomic(dir_ + "/known_hosts", *keys, 0600), IsOk());
  }

  void TearDown() override {
    for (const std::string& spec : specs_) Tool("disconnect", spec);
    RunScript("rm -rf " + runtime_).IgnoreError();
  }

  // A spec of the two nodes, logging in with `key_file` and keeping the
  // connections `persist`.
  // `job`: the [job] table's lines.
  std::string WriteSpec(const std::string& name, const std::string& key_file,
                        const std::string& persist = "10m",
                        const std::string& job = "program = \"/bin/true\"\n") {
    std::string text = "[defaults]\ntransport = \"ssh\"\nworkdir = \"/work/hold\"\nssh = \"bed\"\n";
    for (const TestbedNode& node : *nodes_) {
      absl::StrAppend(&text, "[[nodes]]\nname = \"", node.name, "\"\naddress = \"", node.ip,
                      "\"\n", &node == &nodes_->front() ? "chief = true\n" : "");
    }
    absl::StrAppend(&text, "[ssh.bed]\nuser = \"root\"\nkey_file = ", TomlString(key_file),
                    "\nknown_hosts = ", TomlString(dir_ + "/known_hosts"),
                    "\npersist = ", TomlString(persist), "\n[job]\n", job);
    std::string path = absl::StrCat(dir_, "/", name, ".toml");
    EXPECT_THAT(WriteFileAtomic(path, text, 0644), IsOk());
    specs_.push_back(path);
    return path;
  }

  ToolResult Tool(const std::string& command, const std::string& spec) {
    std::vector<std::string> argv = {absl::StrCat("tools/fleetplan-", command), spec};
    if (command == "exec") argv = {"tools/fleetplan-exec", spec, "--", "true"};
    if (command == "disconnect") argv = {"tools/fleetplan", "disconnect", spec};
    return RunTool(argv, absl::Seconds(60), {{"XDG_RUNTIME_DIR", runtime_}});
  }

  // `fleetplan exec SPEC --json -- command`: each node's "STATUS: OUTPUT".
  std::map<std::string, std::string> Exec(const std::string& spec, const std::string& command) {
    ToolResult exec = RunTool({"tools/fleetplan-exec", spec, "--json", "--", command},
                              absl::Seconds(60), {{"XDG_RUNTIME_DIR", runtime_}});
    std::map<std::string, std::string> nodes;
    nlohmann::json out = nlohmann::json::parse(exec.output, nullptr, /*allow_exceptions=*/false);
    if (!out.is_object()) {
      ADD_FAILURE() << exec.output;
      return nodes;
    }
    for (const nlohmann::json& node : out["nodes"]) {
      nodes[node["node"].get<std::string>()] =
          absl::StrCat(node["exit_status"].dump(), ": ", node["output"].get<std::string>());
    }
    return nodes;
  }

  // The holders of specs of this test ("pid: command line").
  std::vector<std::string> Holders() {
    std::vector<std::string> holders;
    for (const std::string& line : ProcessesMentioning(dir_, absl::ZeroDuration())) {
      if (absl::StrContains(line, "__hold")) holders.push_back(line);
    }
    return holders;
  }

  // The sshd processes serving root's sessions on node `i`, by pid: one
  // per ssh connection logged in.
  std::string SshSessions(int i) {
    absl::StatusOr<std::string> sessions = ContainerExec(
        (*nodes_)[i].name, "ps -eo pid=,args= | grep '[s]shd: root' | awk '{print $1}' | sort");
    EXPECT_THAT(sessions, IsOk());
    return sessions.value_or("?");
  }

  std::string Folder() const { return runtime_ + "/fleetplan"; }

  const std::vector<TestbedNode>* nodes_ = nullptr;
  std::string dir_;
  std::string runtime_;
  std::vector<std::string> specs_;
};

TEST_F(SshHoldTest, ALaterCommandGoesThroughTheHeldSessions) {
  std::string spec = WriteSpec("reuse", (*nodes_)[0].key_file);
  ToolResult first = Tool("status", spec);
  ASSERT_EQ(first.status, 0) << first.output;
  ASSERT_THAT(Holders(), SizeIs(1));
  std::vector<std::string> sessions = {SshSessions(0), SshSessions(1)};
  EXPECT_FALSE(sessions[0].empty());

  ToolResult second = Tool("status", spec);
  ASSERT_EQ(second.status, 0) << second.output;
  ToolResult exec = Tool("exec", spec);
  ASSERT_EQ(exec.status, 0) << exec.output;
  // No new login on either node: the same sshd sessions served them.
  EXPECT_EQ(SshSessions(0), sessions[0]);
  EXPECT_EQ(SshSessions(1), sessions[1]);
  EXPECT_THAT(Holders(), SizeIs(1));

  ToolResult disconnect = Tool("disconnect", spec);
  EXPECT_EQ(disconnect.status, 0) << disconnect.output;
  EXPECT_THAT(disconnect.output, HasSubstr("closed the connections held for 2 nodes"));
  EXPECT_THAT(Holders(), IsEmpty());
}

TEST_F(SshHoldTest, ExecRunsThroughTheNodesAgentStartedOnceThatEndsWithTheHolder) {
  // Node 0 holds an agent and an env.sh, as an apply leaves them; node 1
  // nothing yet.
  const TestbedNode& applied = (*nodes_)[0];
  std::string state = "/work/hold/.fleetplan/nodes/" + applied.name;
  ASSERT_THAT(ContainerExec(applied.name,
                            absl::StrCat("mkdir -p /work/hold/.fleetplan/bin ", state,
                                         " && echo 'export GREETING=from-env.sh' >", state,
                                         "/env.sh")),
              IsOk());
  ASSERT_THAT(RunScript(absl::StrCat("docker cp -L tools/agent/fleetplan-agent ", applied.name,
                                     ":/work/hold/.fleetplan/bin/fleetplan-agent")),
              IsOk());
  std::string spec = WriteSpec("agent", applied.key_file, "5s");
  const std::string command =
      "echo \"${GREETING:-no env.sh} in $(pwd) by $(cat /proc/$PPID/comm) $PPID\"; "
      "echo oops >&2; exit 3";
  // Back to back, well within the persist: the same agent (its pid) ran the
  // second command on node 0, the same login's sshd on node 1.
  std::map<std::string, std::string> first = Exec(spec, command);
  std::map<std::string, std::string> second = Exec(spec, command);
  ASSERT_THAT(first, SizeIs(2));
  EXPECT_THAT(first[applied.name],
              MatchesRegex("3: from-env.sh in /work/hold by fleetplan-agent [0-9]+\noops\n"));
  // Without an agent: through the held connection's own channel, as before
  // (its stdout and stderr are two streams: their lines may come in either
  // order).
  for (const auto* exec : {&first, &second}) {
    const std::string& plain = exec->at((*nodes_)[1].name);
    EXPECT_THAT(plain, HasSubstr("fleetplan exec: /work/hold does not exist on this node yet "
                                 "(apply has not run here); running in the home folder\n"));
    EXPECT_THAT(plain, ContainsRegex("(^3: |\n)no env.sh in /root by [^ ]+ [0-9]+\n"));
    EXPECT_THAT(plain, HasSubstr("oops\n"));
    EXPECT_THAT(plain, Not(HasSubstr("fleetplan-agent")));
  }
  EXPECT_EQ(second.at(applied.name), first.at(applied.name));
  // One agent session on the node, no other agent started.
  EXPECT_THAT(
      ContainerProcessesMentioning(applied.name, "fleetplan-agent", absl::ZeroDuration()),
      ElementsAre(HasSubstr("fleetplan-agent session")));
  EXPECT_THAT(Holders(), SizeIs(1));

  // The holder's idle exit takes the agents with it, here and on the nodes.
  absl::Time deadline = absl::Now() + absl::Seconds(15);
  while (!Holders().empty() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(100));
  EXPECT_THAT(Holders(), IsEmpty());
  EXPECT_THAT(ProcessesMentioning(dir_, absl::Seconds(2)), IsEmpty());
  EXPECT_THAT(ContainerProcessesMentioning(applied.name, "fleetplan-agent", absl::Seconds(5)),
              IsEmpty());
}

// The agent sessions on each node while `run` ran that were not the
// holder's (those have its idle timeout), by node: each node's processes
// are looked at every 20 ms meanwhile (an apply's own session lives as long
// as the apply).
std::map<std::string, std::vector<std::string>> OtherSessionsDuring(
    const std::vector<TestbedNode>& nodes, const std::function<void()>& run) {
  const std::string seen = "/tmp/fp-hold-sessions", stop = "/tmp/fp-hold-stop";
  for (const TestbedNode& node : nodes) {
    // What an earlier call left goes first, before the watcher starts.
    EXPECT_THAT(
        ContainerExec(node.name, absl::StrCat("rm -f ", seen, " ", stop, " ", stop, ".done")),
        IsOk());
    EXPECT_THAT(
        RunScript(absl::StrCat("docker exec -d ", node.name, " sh -c 'while [ ! -e ", stop,
                               " ]; do ps -eo args= | grep \"[f]leetplan-agent session\" >>", seen,
                               "; touch ", seen, "; sleep 0.02; done; touch ", stop, ".done'")),
        IsOk());
  }
  // Every watcher has looked once (`docker exec -d` returns before its
  // command runs; a fixed pause missed a quick apply on a loaded machine).
  for (const TestbedNode& node : nodes) {
    absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (!ContainerExec(node.name, absl::StrCat("test -e ", seen)).ok() &&
           absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    EXPECT_THAT(ContainerExec(node.name, absl::StrCat("test -e ", seen)), IsOk()) << node.name;
  }
  run();
  std::map<std::string, std::vector<std::string>> sessions;
  for (const TestbedNode& node : nodes) {
    absl::StatusOr<std::string> lines = ContainerExec(
        node.name, absl::StrCat("touch ", stop, "; while [ ! -e ", stop,
                                ".done ]; do sleep 0.05; done; sort -u ", seen));
    EXPECT_THAT(lines, IsOk());
    for (absl::string_view line : absl::StrSplit(lines.value_or(""), '\n', absl::SkipEmpty())) {
      if (!absl::StrContains(line, "--idle-timeout")) {
        sessions[node.name].push_back(std::string(line));
      }
    }
  }
  return sessions;
}

TEST_F(SshHoldTest, ApplyThroughAWarmHolderStartsNoAgentSessionOfItsOwn) {
  std::string spec = WriteSpec("apply", (*nodes_)[0].key_file);
  ToolResult first = Tool("apply", spec);
  ASSERT_EQ(first.status, 0) << first.output;
  // The agent the holder keeps on each node serves the next apply: no
  // channel, shell and agent of the apply's own.
  EXPECT_THAT(OtherSessionsDuring(*nodes_,
                                    [&] {
                                      ToolResult held = Tool("apply", spec);
                                      EXPECT_EQ(held.status, 0) << held.output;
                                    }),
              IsEmpty());
  // Without a holder, apply starts its own on every node (and so the
  // record above would have seen one). Its job lasts a second, which the
  // apply follows through its sessions: an unchanged apply of /bin/true
  // was over between two of the watchers' looks.
  std::string direct =
      WriteSpec("apply", (*nodes_)[0].key_file, "0", "program = \"/bin/sleep\"\nargs = [\"1\"]\n");
  std::map<std::string, std::vector<std::string>> own = OtherSessionsDuring(*nodes_, [&] {
    ToolResult apply = Tool("apply", direct);
    EXPECT_EQ(apply.status, 0) << apply.output;
  });
  ASSERT_THAT(own, SizeIs(kNodes));
  for (const auto& [node, lines] : own) {
    EXPECT_THAT(lines, Contains(HasSubstr("fleetplan-agent session --protocol=2"))) << node;
  }
}

TEST_F(SshHoldTest, ASpecWithAnotherKeyIsNotServedByTheFirstHolder) {
  std::string key = (*nodes_)[0].key_file;
  std::string first = WriteSpec("first", key);
  ASSERT_EQ(Tool("status", first).status, 0);
  ASSERT_THAT(Holders(), SizeIs(1));
  std::string sessions = SshSessions(0);
  // The same key's bytes under another name, so that the login works.
  std::string other_key = dir_ + "/other_key";
  ASSERT_THAT(CopyFileAtomic(key, other_key, 0600), IsOk());
  std::string second = WriteSpec("second", other_key);
  ToolResult status = Tool("status", second);
  ASSERT_EQ(status.status, 0) << status.output;
  // A holder of its own, and a login of its own on the node.
  EXPECT_THAT(Holders(), SizeIs(2));
  EXPECT_NE(SshSessions(0), sessions);
}

TEST_F(SshHoldTest, TheHolderLeavesAfterItsPersist) {
  std::string spec = WriteSpec("idle", (*nodes_)[0].key_file, "3s");
  ASSERT_EQ(Tool("status", spec).status, 0);
  ASSERT_THAT(Holders(), SizeIs(1));
  absl::SleepFor(absl::Seconds(2));
  EXPECT_THAT(Holders(), SizeIs(1)) << "it left before its persist";
  absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (!Holders().empty() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(100));
  EXPECT_THAT(Holders(), IsEmpty());
  EXPECT_THAT(RunScript(absl::StrCat("ls ", Folder(), " | grep -c sock || true")),
              IsOkAndHolds("0"));
  // "0" keeps nothing.
  std::string none = WriteSpec("none", (*nodes_)[0].key_file, "0");
  ASSERT_EQ(Tool("status", none).status, 0);
  EXPECT_THAT(Holders(), IsEmpty());
}

TEST_F(SshHoldTest, TheSocketIsTheUsersAlone) {
  std::string spec = WriteSpec("private", (*nodes_)[0].key_file);
  ASSERT_EQ(Tool("status", spec).status, 0);
  struct stat folder;
  ASSERT_EQ(stat(Folder().c_str(), &folder), 0);
  EXPECT_EQ(folder.st_mode & 0777, 0700u);
  EXPECT_EQ(folder.st_uid, geteuid());
  absl::StatusOr<std::string> socket = RunScript(absl::StrCat("ls ", Folder(), "/*.sock"));
  ASSERT_THAT(socket, IsOk());
  struct stat info;
  ASSERT_EQ(stat(socket->c_str(), &info), 0);
  EXPECT_TRUE(S_ISSOCK(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  // Another user cannot reach it.
  absl::StatusOr<std::string> stranger = RunScript(absl::StrCat(
      "setpriv --reuid=65534 --regid=65534 --clear-groups python3 -c \"import socket,sys\n"
      "s = socket.socket(socket.AF_UNIX)\ntry:\n  s.connect(sys.argv[1]); print('connected')\n"
      "except OSError as e:\n  print(e.strerror)\" ",
      *socket));
  ASSERT_THAT(stranger, IsOk());
  EXPECT_EQ(*stranger, "Permission denied");
  // A folder others may enter is not used: the command connects directly.
  ASSERT_EQ(Tool("disconnect", spec).status, 0);
  ASSERT_EQ(chmod(Folder().c_str(), 0755), 0);
  ToolResult status = Tool("status", spec);
  EXPECT_EQ(status.status, 0) << status.output;
  EXPECT_THAT(Holders(), IsEmpty());
}

TEST_F(SshHoldTest, AKilledHolderIsReplaced) {
  std::string spec = WriteSpec("killed", (*nodes_)[0].key_file);
  ASSERT_EQ(Tool("status", spec).status, 0);
  std::vector<std::string> holders = Holders();
  ASSERT_THAT(holders, SizeIs(1));
  std::string pid = holders[0].substr(0, holders[0].find(':'));
  ASSERT_THAT(RunScript("kill -KILL " + pid), IsOk());
  absl::SleepFor(absl::Milliseconds(200));
  ASSERT_THAT(Holders(), IsEmpty());
  ToolResult exec = Tool("exec", spec);
  EXPECT_EQ(exec.status, 0) << exec.output;
  EXPECT_THAT(exec.output, Not(HasSubstr("holder")));
  std::vector<std::string> replaced = Holders();
  ASSERT_THAT(replaced, SizeIs(1));
  EXPECT_NE(replaced[0], holders[0]);
}

}  // namespace
}  // namespace fleetplan
