// The preflight script run by a real /bin/sh against planted faults. Tools
// the checks call (ip, nvidia-smi, ldd, the launch agent) are stand-ins
// put on PATH or at the agent's path, so each outcome is under the test's
// control.

#include "tools/plan/preflight_script.h"

#include <sys/stat.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/plan/compile.h"
#include "tools/plan/node_scripts.h"
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

// `ip -o addr show` of a node whose network interface is `name`.
std::string IpOutput(const std::string& name) {
  return absl::StrCat(
      "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever\n",
      "2: ", name, "    inet 10.1.2.3/24 brd 10.1.2.255 scope global ", name,
      "\\       valid_lft forever\n",
      "3: docker0    inet 172.17.0.1/16 brd 172.17.255.255 scope global docker0\n");
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
    for (NodeSpec& node : spec_.nodes) node.workdir = dir_ + "/work";
    spec_.job.program = "rank.sh";
    spec_.network.master_port = 29555;
    inputs_.chief = &spec_.nodes[0];
    inputs_.master_port = 29555;
    inputs_.nodes = 2;
    inputs_.job = &spec_.job;
  }

  // Creates the workdir with `program` in it.
  void Program(absl::string_view content) {
    ASSERT_THAT(RunSh(absl::StrCat("mkdir -p ", ShellQuote(dir_ + "/work"))), IsOk());
    WriteFileOrDie(dir_ + "/work/rank.sh", content);
  }

  // A stand-in command on the test's PATH.
  void Tool(const std::string& name, const std::string& script) {
    std::string path = absl::StrCat(bin_, "/", name);
    WriteFileOrDie(path, absl::StrCat("#!/bin/sh\n", script));
    ASSERT_EQ(chmod(path.c_str(), 0755), 0);
  }

  // Runs `script` with the stand-ins first on PATH.
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

  Outcome RunNode(int index, std::vector<NodeVar> env = {}) {
    return RunText(absl::StrCat(PreflightLibrary(inputs_.mode),
                                PreflightScript(spec_.nodes[index], env, inputs_)));
  }

  std::string dir_;
  std::string bin_;
  ClusterSpec spec_;
  PreflightInputs inputs_;
  int runs_ = 0;
};

TEST_F(PreflightScriptTest, AHealthyNodePassesAndCreatesItsStateFolder) {
  Program("#!/bin/sh\n");
  Outcome run = RunNode(1);
  EXPECT_EQ(run.status, 0) << run.text;
  CheckResult workdir = run.Check(kCheckWorkdir);
  EXPECT_EQ(workdir.status, CheckStatus::kOk) << workdir.message;
  EXPECT_THAT(workdir.message, HasSubstr("MiB free"));
  EXPECT_TRUE(FileExists(dir_ + "/work/.fleetplan/nodes/n1"));
}

TEST_F(PreflightScriptTest, AMissingProgramFailsOnlyOnceItShouldBeThere) {
  CheckResult applied = RunNode(1).Check(kCheckLibraries);
  EXPECT_EQ(applied.status, CheckStatus::kFail);
  EXPECT_THAT(applied.message, HasSubstr(dir_ + "/work/rank.sh does not exist"));
  inputs_.mode = PreflightMode::kCheckOnly;
  CheckResult checked = RunNode(1).Check(kCheckLibraries);
  EXPECT_EQ(checked.status, CheckStatus::kSkip);
  EXPECT_THAT(checked.message, HasSubstr("is not on this node yet (apply copies it)"));
}

TEST_F(PreflightScriptTest, EveryCheckRunsAndEveryFailureIsReported) {
  spec_.nodes[1].python.kind = PythonEnv::Kind::kVenv;
  spec_.nodes[1].python.venv = dir_ + "/no-venv";
  spec_.nodes[1].gpus = {0, 3};
  inputs_.nccl_auto = true;
  spec_.nodes[1].address = "10.9.9.9";
  Tool("ip", absl::StrCat("cat <<'EOF'\n", IpOutput("eth0"), "EOF\n"));
  Tool("nvidia-smi", "printf '0\\n1\\n'\n");
  Outcome run = RunNode(1);
  EXPECT_EQ(run.status, 1);
  CheckResult python = run.Check(kCheckPython);
  EXPECT_EQ(python.status, CheckStatus::kFail);
  EXPECT_THAT(python.message, HasSubstr(dir_ + "/no-venv does not exist"));
  EXPECT_THAT(python.message, HasSubstr("fix: create it there (python3 -m venv"));
  CheckResult gpus = run.Check(kCheckGpus);
  EXPECT_EQ(gpus.status, CheckStatus::kFail);
  EXPECT_THAT(gpus.message, HasSubstr("GPU 3 not found: nvidia-smi lists 0,1; "
                                      "expected every id in gpus = [0, 3]"));
  CheckResult nccl = run.Check(kCheckNccl);
  EXPECT_EQ(nccl.status, CheckStatus::kFail);
  EXPECT_THAT(nccl.message, HasSubstr("no interface here holds 10.9.9.9"));
  EXPECT_EQ(run.Check(kCheckWorkdir).status, CheckStatus::kOk);
}

TEST_F(PreflightScriptTest, NcclAutoPicksEachNodesOwnInterface) {
  inputs_.nccl_auto = true;
  spec_.nodes[0].address = "10.1.2.3";
  spec_.nodes[1].address = "node-b";
  spec_.nodes[1].private_address = "10.1.2.3";
  std::vector<NodeVar> env = {{"FP_X", "1", false}};
  for (const std::string name : {"eno1", "eth0"}) {
    Tool("ip", absl::StrCat("cat <<'EOF'\n", IpOutput(name), "EOF\n"));
    Outcome run = RunNode(name == "eno1" ? 0 : 1, env);
    CheckResult nccl = run.Check(kCheckNccl);
    EXPECT_EQ(nccl.status, CheckStatus::kOk) << nccl.message;
    EXPECT_EQ(nccl.message, absl::StrCat(name, " holds 10.1.2.3 (10.1.2.3)"));
    EXPECT_THAT(run.output.facts, testing::Contains(Pair("nccl_socket_ifname", name)));
    // The node's ranks get it: env.sh sources what preflight wrote.
    const NodeSpec& node = spec_.nodes[name == "eno1" ? 0 : 1];
    absl::StatusOr<std::string> seen =
        RunSh(absl::StrCat(EnvScript(node, env, /*nccl_auto=*/true),
                           "printf '%s' \"$NCCL_SOCKET_IFNAME\""));
    EXPECT_THAT(seen, IsOkAndHolds(name));
  }
}

TEST_F(PreflightScriptTest, NcclAutoRefusesLoAndDocker0) {
  inputs_.nccl_auto = true;
  Tool("ip", absl::StrCat("cat <<'EOF'\n", IpOutput("eth0"), "EOF\n"));
  for (const auto& [address, interface] :
       std::vector<std::pair<std::string, std::string>>{{"127.0.0.1", "lo"},
                                                        {"localhost", "lo"},
                                                        {"172.17.0.1", "docker0"}}) {
    spec_.nodes[1].address = address;
    Outcome run = RunNode(1);
    CheckResult nccl = run.Check(kCheckNccl);
    EXPECT_EQ(nccl.status, CheckStatus::kFail) << address;
    EXPECT_THAT(nccl.message, HasSubstr(absl::StrCat("on ", interface, "; expected an "
                                                     "interface the other nodes reach")))
        << address;
    EXPECT_THAT(nccl.message, HasSubstr("fix: set the node's private_address"));
    EXPECT_FALSE(FileExists(PreflightEnvPath(spec_.nodes[1])));
  }
}

TEST_F(PreflightScriptTest, GpuIdsAreCheckedOrSkippedWithANote) {
  spec_.nodes[1].gpus = {0, 1};
  Outcome without = RunNode(1);
  CheckResult skipped = without.Check(kCheckGpus);
  EXPECT_EQ(skipped.status, CheckStatus::kSkip);
  EXPECT_EQ(skipped.message, "no nvidia-smi on the ranks' PATH; GPU ids 0, 1 not checked");

  Tool("nvidia-smi", "printf '0\\n1\\n2\\n'\n");
  CheckResult ok = RunNode(1).Check(kCheckGpus);
  EXPECT_EQ(ok.status, CheckStatus::kOk) << ok.message;
  EXPECT_EQ(ok.message, "GPUs 0, 1 present (nvidia-smi lists 0,1,2)");
}

TEST_F(PreflightScriptTest, GpuToolOnTheRanksPathIsTheOneAsked) {
  // [env] PATH replaces the node's: only its nvidia-smi counts.
  std::string rank_bin = dir_ + "/rank-bin";
  ASSERT_EQ(mkdir(rank_bin.c_str(), 0755), 0);
  WriteFileOrDie(rank_bin + "/nvidia-smi", "#!/bin/sh\nprintf '0\\n'\n");
  ASSERT_EQ(chmod((rank_bin + "/nvidia-smi").c_str(), 0755), 0);
  Tool("nvidia-smi", "printf '0\\n1\\n'\n");
  spec_.nodes[1].gpus = {1};
  Outcome run = RunNode(1, {{"PATH", rank_bin + ":/usr/bin:/bin", false}});
  CheckResult gpus = run.Check(kCheckGpus);
  EXPECT_EQ(gpus.status, CheckStatus::kFail);
  EXPECT_THAT(gpus.message, HasSubstr("GPU 1 not found: nvidia-smi lists 0;"));
}

TEST_F(PreflightScriptTest, LibrariesThatDoNotResolveAreNamed) {
  Program("");
  Tool("ldd", "printf '\\tlibc.so.6 => /lib/libc.so.6 (0x1)\\n"
              "\\tlibfoo.so.1 => not found\\n\\tlibbar.so => not found\\n'\n");
  Outcome run = RunNode(1, {{"LD_LIBRARY_PATH", "/opt/lib", false}});
  CheckResult libraries = run.Check(kCheckLibraries);
  EXPECT_EQ(libraries.status, CheckStatus::kFail);
  EXPECT_THAT(libraries.message,
              HasSubstr("needs libfoo.so.1, libbar.so, not found on this node "
                        "(LD_LIBRARY_PATH=/opt/lib); expected every shared library"));
  EXPECT_THAT(libraries.message, HasSubstr("fix: install them"));
}

TEST_F(PreflightScriptTest, LibtorchIsReportedAsAFact) {
  Program("");
  WriteFileOrDie(dir_ + "/libtorch_cpu.so.1.13.0", "not really a library");
  ASSERT_EQ(symlink((dir_ + "/libtorch_cpu.so.1.13.0").c_str(),
                    (dir_ + "/libtorch_cpu.so.1.13").c_str()),
            0);
  Tool("ldd", absl::StrCat("printf '\\tlibtorch_cpu.so.1.13 => ", dir_,
                           "/libtorch_cpu.so.1.13 (0x1)\\n'\n"));
  Outcome run = RunNode(1);
  EXPECT_EQ(run.Check(kCheckLibraries).status, CheckStatus::kOk);
  ASSERT_EQ(run.output.facts.size(), 1u);
  EXPECT_EQ(run.output.facts[0].first, "libtorch");
  absl::StatusOr<std::string> cksum =
      RunSh(absl::StrCat("cksum <", dir_, "/libtorch_cpu.so.1.13.0 | awk '{printf \"%s %s\", $1, $2}'"));
  ASSERT_THAT(cksum, IsOk());
  EXPECT_EQ(run.output.facts[0].second,
            absl::StrCat(*cksum, " ", dir_, "/libtorch_cpu.so.1.13.0"));
}

TEST_F(PreflightScriptTest, AScriptProgramSkipsTheLibraryCheck) {
  Program("#!/bin/sh\n");
  CheckResult libraries = RunNode(1).Check(kCheckLibraries);
  EXPECT_EQ(libraries.status, CheckStatus::kSkip);
  EXPECT_THAT(libraries.message, HasSubstr("not a dynamically linked program"));
}

TEST_F(PreflightScriptTest, AVenvThatDoesNotActivateFails) {
  std::string venv = dir_ + "/venv";
  ASSERT_THAT(RunSh(absl::StrCat("mkdir -p ", venv, "/bin")), IsOk());
  WriteFileOrDie(venv + "/bin/activate", "if then\n");
  spec_.nodes[1].python.kind = PythonEnv::Kind::kVenv;
  spec_.nodes[1].python.venv = venv;
  CheckResult broken = RunNode(1).Check(kCheckPython);
  EXPECT_EQ(broken.status, CheckStatus::kFail);
  EXPECT_THAT(broken.message, HasSubstr("bin/activate fails"));

  // A good one is active for the checks after it.
  WriteFileOrDie(venv + "/bin/activate", absl::StrCat("PATH=", venv, "/bin:$PATH\n"));
  WriteFileOrDie(venv + "/bin/nvidia-smi", "#!/bin/sh\nprintf '7\\n'\n");
  ASSERT_EQ(chmod((venv + "/bin/nvidia-smi").c_str(), 0755), 0);
  spec_.nodes[1].gpus = {7};
  Outcome run = RunNode(1);
  EXPECT_EQ(run.Check(kCheckPython).status, CheckStatus::kOk);
  EXPECT_EQ(run.Check(kCheckGpus).status, CheckStatus::kOk);
}

TEST_F(PreflightScriptTest, CondaIsActivatedThroughCondaSh) {
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

TEST_F(PreflightScriptTest, TheChiefListensAndEveryNodeConnects) {
  // A stand-in agent: records its arguments; the listener prints the port
  // check and holds until its stdin closes, as the real one does.
  std::string agent = AgentPath(spec_.nodes[0]);
  ASSERT_THAT(RunSh(absl::StrCat("mkdir -p ", ShellQuote(dir_ + "/work/.fleetplan/bin"))),
              IsOk());
  WriteFileOrDie(agent, absl::StrCat(
      "#!/bin/sh\necho \"$*\" >>", ShellQuote(dir_ + "/agent-args"), "\n",
      "case $1 in\n"
      "  --probe-listen=*) echo 'fleetplan-check port ok port 29555: free'; cat >/dev/null ;;\n"
      "  --probe-connect=*) echo 'connected to n0:29555' ;;\n"
      "esac\n"));
  ASSERT_EQ(chmod(agent.c_str(), 0755), 0);
  Outcome chief = RunNode(0);
  EXPECT_EQ(chief.Check(kCheckPort).status, CheckStatus::kOk);
  CheckResult connect = chief.Check(kCheckConnect);
  EXPECT_EQ(connect.status, CheckStatus::kOk);
  EXPECT_EQ(connect.message, "connected to n0:29555");
  Outcome other = RunNode(1);
  EXPECT_THAT(other.text, Not(HasSubstr("fleetplan-check port")));
  EXPECT_EQ(other.Check(kCheckConnect).status, CheckStatus::kOk);
  // The listener runs in the background: its line may come first or not.
  absl::StatusOr<std::string> args =
      RunSh(absl::StrCat("sort ", ShellQuote(dir_ + "/agent-args")));
  EXPECT_THAT(args, IsOkAndHolds("--probe-connect=10.1.0.1:29555 --probe-timeout=30s\n"
                                 "--probe-connect=10.1.0.1:29555 --probe-timeout=30s\n"
                                 "--probe-listen=29555 --probe-expect=2 --probe-timeout=24h\n"));
}

TEST_F(PreflightScriptTest, WithoutTheAgentPortAndConnectAreSkippedWithANote) {
  Outcome chief = RunNode(0);
  CheckResult port = chief.Check(kCheckPort);
  EXPECT_EQ(port.status, CheckStatus::kSkip);
  EXPECT_THAT(port.message, HasSubstr("fleetplan-agent is not on this node yet"));
  EXPECT_EQ(chief.Check(kCheckConnect).status, CheckStatus::kSkip);
}

TEST_F(PreflightScriptTest, ConnectFailureSaysWhatToOpen) {
  std::string agent = AgentPath(spec_.nodes[1]);
  ASSERT_THAT(RunSh(absl::StrCat("mkdir -p ", ShellQuote(dir_ + "/work/.fleetplan/bin"))),
              IsOk());
  WriteFileOrDie(agent, "#!/bin/sh\necho 'cannot connect to 10.1.0.1:29555: refused' >&2\nexit 1\n");
  ASSERT_EQ(chmod(agent.c_str(), 0755), 0);
  CheckResult connect = RunNode(1).Check(kCheckConnect);
  EXPECT_EQ(connect.status, CheckStatus::kFail);
  EXPECT_THAT(connect.message,
              HasSubstr("cannot connect to 10.1.0.1:29555: refused; expected a TCP "
                        "connection from this node to MASTER_ADDR:MASTER_PORT; fix: allow "
                        "TCP port 29555 into the chief"));
}

TEST_F(PreflightScriptTest, CheckOnlyModeWritesNothing) {
  inputs_.mode = PreflightMode::kCheckOnly;
  inputs_.nccl_auto = true;
  spec_.nodes[1].address = "10.1.2.3";
  Tool("ip", absl::StrCat("cat <<'EOF'\n", IpOutput("eth0"), "EOF\n"));
  Outcome run = RunNode(1);
  EXPECT_EQ(run.status, 0) << run.text;
  CheckResult workdir = run.Check(kCheckWorkdir);
  EXPECT_EQ(workdir.status, CheckStatus::kOk);
  EXPECT_THAT(workdir.message, HasSubstr(absl::StrCat("does not exist yet; ")));
  EXPECT_EQ(run.Check(kCheckNccl).status, CheckStatus::kOk);
  EXPECT_EQ(run.Check(kCheckLibraries).status, CheckStatus::kSkip);
  EXPECT_FALSE(FileExists(dir_ + "/work"));
}

TEST_F(PreflightScriptTest, AWorkdirUnderAFileCannotBeCreated) {
  WriteFileOrDie(dir_ + "/file", "");
  for (NodeSpec& node : spec_.nodes) node.workdir = dir_ + "/file/work";
  CheckResult applied = RunNode(1).Check(kCheckWorkdir);
  EXPECT_EQ(applied.status, CheckStatus::kFail);
  EXPECT_THAT(applied.message, HasSubstr("cannot be created or written by"));
  EXPECT_THAT(applied.message, HasSubstr("Not a directory"));
  EXPECT_THAT(applied.message, HasSubstr("fix: choose a workdir on a writable filesystem"));

  inputs_.mode = PreflightMode::kCheckOnly;
  CheckResult checked = RunNode(1).Check(kCheckWorkdir);
  EXPECT_EQ(checked.status, CheckStatus::kFail);
  EXPECT_THAT(checked.message, HasSubstr(dir_ + "/file is not a folder"));
}

TEST_F(PreflightScriptTest, NotEnoughRoomForTheSyncFails) {
  CheckResult room = RunText(WorkdirCheckScript(spec_.nodes[1], uint64_t{1} << 60))
                         .Check(kCheckWorkdir);
  EXPECT_EQ(room.status, CheckStatus::kFail);
  EXPECT_THAT(room.message, HasSubstr("MiB free, the sync needs 1099511627776 MiB; "
                                      "expected at least the sync's size free; fix: free space"));
  EXPECT_EQ(RunText(WorkdirCheckScript(spec_.nodes[1], 1024)).Check(kCheckWorkdir).status,
            CheckStatus::kOk);
}

TEST_F(PreflightScriptTest, HostilePathsArriveVerbatim) {
  std::string hostile = absl::StrCat(dir_, "/it's $(touch ", dir_, "/pwned) `id` \"q\" \\ $HOME;|&");
  for (NodeSpec& node : spec_.nodes) {
    node.workdir = hostile + "/work";
    node.name = "n'$(id)";
    node.python.kind = PythonEnv::Kind::kVenv;
    node.python.venv = hostile + "/venv";
  }
  spec_.job.program = "prog $(touch x)";
  inputs_.chief = &spec_.nodes[0];
  Outcome run = RunNode(1);
  EXPECT_EQ(run.Check(kCheckWorkdir).status, CheckStatus::kOk) << run.text;
  EXPECT_TRUE(FileExists(hostile + "/work/.fleetplan/nodes/n'$(id)"));
  EXPECT_THAT(run.Check(kCheckPython).message,
              HasSubstr(absl::StrCat("venv ", hostile, "/venv does not exist")));
  EXPECT_THAT(run.Check(kCheckLibraries).message,
              HasSubstr(absl::StrCat(hostile, "/work/prog $(touch x) does not exist")));
  EXPECT_FALSE(FileExists(dir_ + "/pwned"));
}

TEST_F(PreflightScriptTest, CompiledPlansRunTheChiefBesideTheOthers) {
  spec_.nodes[0].chief = true;
  FP_ASSERT_OK_AND_ASSIGN(Plan plan, CompilePlan(spec_, {"hash", 4096}));
  const Phase& preflight = plan.phases[4];
  ASSERT_EQ(preflight.kind, PhaseKind::kPreflight);
  EXPECT_TRUE(preflight.steps[0].serves_phase);
  EXPECT_FALSE(preflight.steps[1].serves_phase);
  EXPECT_THAT(preflight.steps[0].command, HasSubstr("fp_listen 29555 2\n"));
  EXPECT_THAT(preflight.steps[0].command, HasSubstr("wait \"$fp_listener\""));
  EXPECT_THAT(preflight.steps[1].command, Not(HasSubstr("fp_listen ")));
  EXPECT_THAT(preflight.steps[1].command, HasSubstr(" 4096 "));
  EXPECT_THAT(preflight.steps[1].inputs,
              ElementsAre(Pair("workdir", dir_ + "/work"), Pair("connect", "10.1.0.1:29555"),
                          Pair("program", dir_ + "/work/rank.sh")));

  FP_ASSERT_OK_AND_ASSIGN(Plan check, CompileCheckPlan(spec_, {"hash", 4096}));
  ASSERT_EQ(check.phases.size(), 1u);
  EXPECT_EQ(check.phases[0].kind, PhaseKind::kPreflight);
  // The functions every node's checks share are held once, in the phase.
  EXPECT_THAT(check.phases[0].preamble, HasSubstr("fp_mode=check\n"));
  EXPECT_THAT(preflight.preamble, HasSubstr("fp_mode=apply\n"));
  EXPECT_THAT(preflight.steps[1].command, Not(HasSubstr("fp_workdir() {")));
}

}  // namespace
}  // namespace fleetplan
