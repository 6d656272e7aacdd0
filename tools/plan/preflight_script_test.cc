// The shell around the preflight checks, run by a real /bin/sh with the
// real launch agent at the agent's path: the python activation and the
// exports reach the agent's checks, a missing or failing agent is never a
// pass, and hostile paths arrive verbatim. The checks themselves are
// tested in tools/agent/preflight_test.cc.

#include "tools/plan/preflight_script.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/plan/compile.h"
#include "tools/plan/test_specs.h"
#include "tools/protocol/check_line.h"
#include "tools/protocol/node_layout.h"
#include "tools/util/sh_test_util.h"
#include "tools/util/shell_quote.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

// A socket listening on a free port of 127.0.0.1: connections to it
// complete (the kernel's backlog) without anyone accepting them.
int ListenOnAFreePort(int* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), size), 0);
  EXPECT_EQ(listen(fd, 64), 0);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  *port = ntohs(address.sin_port);
  return fd;
}

struct Outcome {
  int status = -1;
  CheckOutput output;
  std::string text;

  // The result of `check`, failing the test when there is not exactly one.
  CheckResult Check(absl::string_view check) const {
    std::vector<CheckResult> found;
    for (const CheckResult& result : output.checks) {
      if (result.check == check) found.push_back(result);
    }
    EXPECT_EQ(found.size(), 1u) << check << " in:\n" << text;
    return found.empty() ? CheckResult{} : found.front();
  }
};

class PreflightScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTestDir();
    bin_ = dir_ + "/bin";
    ASSERT_EQ(mkdir(bin_.c_str(), 0755), 0);
    spec_ = ThreeNodeSpec();
    spec_.nodes.resize(2);
    for (NodeSpec& node : spec_.nodes) {
      node.workdir = dir_ + "/work";
      node.address = "127.0.0.1";
    }
    spec_.job.program = "./rank.sh";
    // The chief's ports, served here, so that connect checks end at once.
    master_ = ListenOnAFreePort(&spec_.network.master_port);
    int supervisor_port;
    supervisor_ = ListenOnAFreePort(&supervisor_port);
    spec_.job.supervisor_port = supervisor_port;
    inputs_.chief = &spec_.nodes[0];
    inputs_.master_port = spec_.network.master_port;
    inputs_.supervisor_port = supervisor_port;
    inputs_.nodes = 2;
    inputs_.job = &spec_.job;
  }

  // The real agent where the sync puts it.
  void InstallAgent(const NodeSpec& node) {
    ASSERT_THAT(RunSh(absl::StrCat(
                    "mkdir -p ", ShellQuote(BinPath(node, "")), " && cp ",
                    ShellQuote(absl::StrCat(getenv("TEST_SRCDIR"),
                                            "/fleetplan/tools/agent/fleetplan-agent")),
                    " ", ShellQuote(AgentPath(node)))),
                IsOk());
  }

  // A file, in folders made for it.
  void Write(const std::string& path, const std::string& content) {
    ASSERT_THAT(RunSh(absl::StrCat("mkdir -p \"$(dirname ", ShellQuote(path), ")\"")), IsOk());
    WriteFileOrDie(path, content);
  }

  // An executable file.
  void Executable(const std::string& path, const std::string& script) {
    Write(path, absl::StrCat("#!/bin/sh\n", script));
    ASSERT_EQ(chmod(path.c_str(), 0755), 0);
  }

  void TearDown() override {
    close(master_);
    close(supervisor_);
  }

  Outcome RunText(const std::string& script) {
    std::string file = absl::StrCat(dir_, "/preflight-", ++runs_, ".sh");
    WriteFileOrDie(file, script);
    absl::StatusOr<std::string> text = RunSh(absl::StrCat(
        "PATH=", ShellQuote(bin_), ":$PATH; export PATH; sh ", ShellQuote(file),
        " </dev/null; echo \"exit=$?\""));
    EXPECT_THAT(text, IsOk());
    Outcome run;
    if (!text.ok()) return run;
    run.text = *text;
    run.output = ParseCheckOutput(*text);
    size_t exit = text->rfind("exit=");
    if (exit != std::string::npos) run.status = std::stoi(text->substr(exit + 5));
    return run;
  }

  // The node's preflight; node 1 (not the chief) unless told.
  Outcome RunNode(int index, std::vector<NodeVar> env = {}) {
    return RunText(
        absl::StrCat(PreflightLibrary(), PreflightScript(spec_.nodes[index], env, inputs_)));
  }

  std::string dir_;
  std::string bin_;
  int master_ = -1;
  int supervisor_ = -1;
  ClusterSpec spec_;
  PreflightInputs inputs_;
  int runs_ = 0;
};

TEST_F(PreflightScriptTest, WithoutTheAgentNothingPasses) {
  Outcome applied = RunNode(1);
  EXPECT_EQ(applied.status, 1) << applied.text;
  CheckResult missing = applied.Check(kCheckAgent);
  EXPECT_EQ(missing.status, CheckStatus::kFail);
  EXPECT_THAT(missing.message, HasSubstr("fleetplan-agent is not on this node yet"));
  EXPECT_EQ(applied.output.checks.size(), 1u) << applied.text;

  inputs_.mode = PreflightMode::kCheckOnly;
  Outcome checked = RunNode(1);
  EXPECT_EQ(checked.status, 0) << checked.text;
  EXPECT_EQ(checked.Check(kCheckAgent).status, CheckStatus::kSkip);
}

TEST_F(PreflightScriptTest, AnAgentThatEndsAbnormallyIsNeverAPass) {
  ASSERT_THAT(RunSh(absl::StrCat("mkdir -p ", ShellQuote(BinPath(spec_.nodes[1], "")))),
              IsOk());
  // An agent of an older protocol: it refuses the command, status 2, no lines.
  Executable(AgentPath(spec_.nodes[1]), "echo 'unknown flag preflight' >&2; exit 2\n");
  Outcome applied = RunNode(1);
  EXPECT_EQ(applied.status, 1) << applied.text;
  CheckResult agent = applied.Check(kCheckAgent);
  EXPECT_EQ(agent.status, CheckStatus::kFail);
  EXPECT_THAT(agent.message, HasSubstr("ended with status 2 before its checks were done"));
  inputs_.mode = PreflightMode::kCheckOnly;
  EXPECT_EQ(RunNode(1).Check(kCheckAgent).status, CheckStatus::kSkip);
}

TEST_F(PreflightScriptTest, AHealthyNodeRunsEveryCheckInTheAgent) {
  InstallAgent(spec_.nodes[1]);
  Executable(dir_ + "/work/rank.sh", "");
  spec_.nodes[1].gpus = {0};
  Outcome run = RunNode(1);
  CheckResult workdir = run.Check(kCheckWorkdir);
  EXPECT_EQ(workdir.status, CheckStatus::kOk) << workdir.message;
  EXPECT_THAT(workdir.message, HasSubstr("MiB free"));
  EXPECT_TRUE(FileExists(dir_ + "/work/.fleetplan/nodes/n1"));
  EXPECT_EQ(run.Check(kCheckLibraries).status, CheckStatus::kSkip);  // a script
  EXPECT_EQ(run.Check(kCheckGpus).status, CheckStatus::kSkip);       // no nvidia-smi
  CheckResult connect = run.Check(kCheckConnect);
  EXPECT_EQ(connect.status, CheckStatus::kOk) << connect.message;
  EXPECT_THAT(connect.message,
              HasSubstr(absl::StrCat("port ", inputs_.supervisor_port, " (supervisor_port): "
                                     "connected to 127.0.0.1:")));
}

TEST_F(PreflightScriptTest, TheActivatedVenvAndTheExportsReachTheChecks) {
  InstallAgent(spec_.nodes[1]);
  Executable(dir_ + "/work/rank.sh", "");
  std::string venv = dir_ + "/venv";
  spec_.nodes[1].python.kind = PythonEnv::Kind::kVenv;
  spec_.nodes[1].python.venv = venv;
  spec_.nodes[1].gpus = {7};

  CheckResult missing = RunNode(1).Check(kCheckPython);
  EXPECT_EQ(missing.status, CheckStatus::kFail);
  EXPECT_THAT(missing.message, HasSubstr(venv + " does not exist"));

  Write(venv + "/bin/activate", "if then\n");
  CheckResult broken = RunNode(1).Check(kCheckPython);
  EXPECT_EQ(broken.status, CheckStatus::kFail);
  EXPECT_THAT(broken.message, HasSubstr("bin/activate fails: "));

  // A good one is active for the checks: its nvidia-smi is the one asked.
  WriteFileOrDie(venv + "/bin/activate", absl::StrCat("PATH=", venv, "/bin:$PATH\n"));
  Executable(venv + "/bin/nvidia-smi", "printf '7\\n'\n");
  Outcome run = RunNode(1);
  EXPECT_EQ(run.Check(kCheckPython).status, CheckStatus::kOk);
  EXPECT_EQ(run.Check(kCheckGpus).message, "GPUs 7 present (nvidia-smi lists 7)");

  // [env] PATH, exported after the activation, wins.
  std::string rank_bin = dir_ + "/rank-bin";
  Executable(rank_bin + "/nvidia-smi", "printf '0\\n'\n");
  CheckResult gpus =
      RunNode(1, {{"PATH", rank_bin + ":/usr/bin:/bin", false}}).Check(kCheckGpus);
  EXPECT_EQ(gpus.status, CheckStatus::kFail);
  EXPECT_THAT(gpus.message, HasSubstr("GPU 7 not found: nvidia-smi lists 0;"));
}

TEST_F(PreflightScriptTest, CondaIsActivatedThroughCondaSh) {
  InstallAgent(spec_.nodes[1]);
  std::string conda_sh = dir_ + "/conda.sh";
  WriteFileOrDie(conda_sh,
                 "conda() { [ \"$2\" = torch ] || { echo \"no env $2\" >&2; return 1; }; }\n");
  spec_.nodes[1].python.kind = PythonEnv::Kind::kConda;
  spec_.nodes[1].python.conda_sh = conda_sh;
  spec_.nodes[1].python.conda = "torch";
  EXPECT_EQ(RunNode(1).Check(kCheckPython).status, CheckStatus::kOk);
  spec_.nodes[1].python.conda = "nope";
  CheckResult missing = RunNode(1).Check(kCheckPython);
  EXPECT_EQ(missing.status, CheckStatus::kFail);
  EXPECT_THAT(missing.message, HasSubstr("conda activate nope fails: no env nope"));
}

TEST_F(PreflightScriptTest, HostilePathsArriveVerbatim) {
  std::string hostile =
      absl::StrCat(dir_, "/it's $(touch ", dir_, "/pwned) `id` \"q\" \\ $HOME;|&");
  for (NodeSpec& node : spec_.nodes) {
    node.workdir = hostile + "/work";
    node.name = "n'$(id)";
    node.python.kind = PythonEnv::Kind::kVenv;
    node.python.venv = hostile + "/venv";
  }
  spec_.job.program = "./prog $(touch x)";
  InstallAgent(spec_.nodes[1]);
  Outcome run = RunNode(1);
  EXPECT_EQ(run.Check(kCheckWorkdir).status, CheckStatus::kOk) << run.text;
  EXPECT_TRUE(FileExists(hostile + "/work/.fleetplan/nodes/n'$(id)"));
  EXPECT_THAT(run.Check(kCheckPython).message,
              HasSubstr(absl::StrCat("venv ", hostile, "/venv does not exist")));
  EXPECT_THAT(run.Check(kCheckLibraries).message,
              HasSubstr(absl::StrCat(hostile, "/work/prog $(touch x) does not exist")));
  EXPECT_FALSE(FileExists(dir_ + "/pwned"));
}

TEST_F(PreflightScriptTest, BeforeTheSyncTheWorkdirNeedsNoAwk) {
  // PATH holds only what the script may use; awk is not among them.
  for (const char* tool : {"id", "mkdir", "df", "tr", "cat"}) {
    ASSERT_THAT(RunSh(absl::StrCat("ln -s \"$(command -v ", tool, ")\" ", ShellQuote(bin_))),
                IsOk());
  }
  auto run = [&](uint64_t bytes) {
    std::string file = absl::StrCat(dir_, "/workdir-", ++runs_, ".sh");
    WriteFileOrDie(file, WorkdirCheckScript(spec_.nodes[1], bytes));
    absl::StatusOr<std::string> text = RunSh(absl::StrCat(
        "PATH=", ShellQuote(bin_), " /bin/sh ", ShellQuote(file), "; echo \"exit=$?\""));
    EXPECT_THAT(text, IsOk());
    Outcome outcome;
    outcome.text = text.value_or("");
    outcome.output = ParseCheckOutput(outcome.text);
    return outcome;
  };
  CheckResult room = run(uint64_t{1} << 60).Check(kCheckWorkdir);
  EXPECT_EQ(room.status, CheckStatus::kFail);
  EXPECT_THAT(room.message, HasSubstr("MiB free, the sync needs 1099511627776 MiB; "
                                      "expected at least the sync's size free; fix: free space"));
  CheckResult fits = run(1024).Check(kCheckWorkdir);
  EXPECT_EQ(fits.status, CheckStatus::kOk) << fits.message;
  EXPECT_TRUE(FileExists(NodeStateDir(spec_.nodes[1])));

  // A df that gives no figure: free space is not known, so not ok.
  ASSERT_THAT(RunSh(absl::StrCat("rm ", ShellQuote(bin_ + "/df"))), IsOk());
  Executable(bin_ + "/df", "echo 'df: cannot read table of mounted file systems' >&2; exit 1\n");
  CheckResult unknown = run(1024).Check(kCheckWorkdir);
  EXPECT_EQ(unknown.status, CheckStatus::kSkip);
  EXPECT_THAT(unknown.message, HasSubstr("free space not checked"));
}

TEST_F(PreflightScriptTest, AWorkdirUnderAFileCannotBeCreatedBeforeTheSync) {
  WriteFileOrDie(dir_ + "/file", "");
  spec_.nodes[1].workdir = dir_ + "/file/work";
  Outcome run = RunText(WorkdirCheckScript(spec_.nodes[1], 1));
  CheckResult workdir = run.Check(kCheckWorkdir);
  EXPECT_EQ(workdir.status, CheckStatus::kFail);
  EXPECT_THAT(workdir.message, HasSubstr("cannot be created or written by"));
  EXPECT_THAT(workdir.message, HasSubstr("Not a directory"));
  EXPECT_THAT(workdir.message, HasSubstr("fix: choose a workdir on a writable filesystem"));
}

TEST_F(PreflightScriptTest, CompiledPlansRunTheChiefBesideTheOthers) {
  spec_.nodes[0].chief = true;
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec_, {"hash", 4096}));
  const Phase& preflight = plan.phases[4];
  ASSERT_EQ(preflight.kind, PhaseKind::kPreflight);
  EXPECT_TRUE(preflight.steps[0].serves_phase);
  EXPECT_FALSE(preflight.steps[1].serves_phase);
  PreflightRequest chief = PreflightRequestFor(spec_.nodes[0], inputs_);
  EXPECT_EQ(chief.listen_for, 2);
  EXPECT_EQ(PreflightRequestFor(spec_.nodes[1], inputs_).listen_for, 0);
  EXPECT_THAT(preflight.steps[0].command, HasSubstr("\"listen_for\":2,"));
  EXPECT_THAT(preflight.steps[0].command,
              HasSubstr(absl::StrCat("\"supervisor_port\":", inputs_.supervisor_port, ",")));
  EXPECT_THAT(preflight.steps[1].command, HasSubstr("\"listen_for\":0,"));
  // The sources' size, rounded up to a MiB.
  EXPECT_THAT(preflight.steps[1].command, HasSubstr("\"sync_bytes\":1048576,"));
  EXPECT_THAT(preflight.steps[0].inputs,
              ElementsAre(Pair("workdir", dir_ + "/work"),
                          Pair("master_port", absl::StrCat(inputs_.master_port)),
                          Pair("supervisor_port", absl::StrCat(inputs_.supervisor_port)),
                          Pair("connect", absl::StrCat("127.0.0.1:", inputs_.master_port, ",",
                                                       inputs_.supervisor_port)),
                          Pair("program", dir_ + "/work/rank.sh")));

  FP_ASSERT_OK_AND_ASSIGN(Plan check, CompileCheckPlan(spec_, {"hash", 4096}));
  ASSERT_EQ(check.phases.size(), 1u);
  EXPECT_EQ(check.phases[0].kind, PhaseKind::kPreflight);
  EXPECT_THAT(check.phases[0].steps[1].command, HasSubstr("\"mode\":\"check\""));
  EXPECT_THAT(preflight.steps[1].command, HasSubstr("\"mode\":\"apply\""));
  // The function every node's script shares is held once, in the phase.
  EXPECT_THAT(preflight.preamble, HasSubstr("fp_check() {"));
  EXPECT_THAT(preflight.steps[1].command, Not(HasSubstr("fp_check() {")));
}

}  // namespace
}  // namespace fleetplan
