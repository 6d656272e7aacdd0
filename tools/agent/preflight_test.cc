// The agent's preflight checks against planted faults: stand-in tools on a
// PATH of the test's own, folders that cannot hold a workdir, ports taken.

#include "tools/agent/preflight.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/agent/sockets.h"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/protocol/check_line.h"
#include "tools/util/digest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// A port nothing listens on right now.
int FreePort() {
  int fd = BindAnyAddress(0);
  EXPECT_GE(fd, 0);
  sockaddr_in6 address{};
  socklen_t size = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  close(fd);
  return ntohs(address.sin6_port);
}

class PreflightTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    request_.workdir = dir_ + "/work";
    request_.state_dir = dir_ + "/work/.fleetplan/nodes/a";
    request_.chief_address = "127.0.0.1";
    request_.master_port = FreePort();
    request_.supervisor_port = FreePort();
    request_.connect_timeout = absl::Seconds(2);
    request_.program = "/bin/sh";
  }

  // A stand-in command in the test's bin folder, the PATH CheckGpus gets.
  std::string Tool(const std::string& name, const std::string& script) {
    std::string bin = dir_ + "/bin";
    EXPECT_THAT(WriteFileAtomic(bin + "/" + name, absl::StrCat("#!/bin/sh\n", script), 0755),
                IsOk());
    return bin;
  }

  // RunPreflight's exit status and output.
  std::pair<int, std::string> Run(const Activation& activation = {}) {
    std::FILE* out = std::tmpfile();
    int status = RunPreflight(request_, activation, -1, out);
    std::rewind(out);
    std::string text;
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), out)) > 0) text.append(buffer, n);
    std::fclose(out);
    return {status, text};
  }

  std::string dir_;
  PreflightRequest request_;
};

TEST_F(PreflightTest, WithoutNvidiaSmiOnThePathGpusAreSkipped) {
  CheckResult result = CheckGpus({0, 1}, dir_ + "/empty:/nonexistent");
  EXPECT_EQ(result.status, CheckStatus::kSkip);
  EXPECT_EQ(result.message, "no nvidia-smi on the ranks' PATH; GPU ids 0, 1 not checked");
}

TEST_F(PreflightTest, GpusAreThoseNvidiaSmiLists) {
  std::string path = Tool("nvidia-smi", "printf '0\\n1\\n'\n");
  CheckResult missing = CheckGpus({0, 1, 3}, path);
  EXPECT_EQ(missing.status, CheckStatus::kFail);
  EXPECT_EQ(missing.message, "GPU 3 not found: nvidia-smi lists 0,1; expected every id in "
                             "gpus = [0, 1, 3]; fix: list only GPUs this node has in its gpus");
  CheckResult ok = CheckGpus({1}, path);
  EXPECT_EQ(ok.status, CheckStatus::kOk);
  EXPECT_EQ(ok.message, "GPUs 1 present (nvidia-smi lists 0,1)");
}

TEST_F(PreflightTest, ABrokenOrGarbledNvidiaSmiIsNeverOk) {
  CheckResult broken =
      CheckGpus({0}, Tool("nvidia-smi", "echo 'NVIDIA-SMI has failed' >&2; exit 9\n"));
  EXPECT_EQ(broken.status, CheckStatus::kFail);
  EXPECT_THAT(broken.message, HasSubstr("nvidia-smi fails (exit status 9): NVIDIA-SMI has "
                                        "failed; expected it to list this node's GPUs"));
  CheckResult garbled = CheckGpus({0}, Tool("nvidia-smi", "echo 'No devices were found'\n"));
  EXPECT_EQ(garbled.status, CheckStatus::kSkip);
  EXPECT_EQ(garbled.message, "nvidia-smi printed 'No devices were found', not a GPU index; "
                             "GPU ids 0 not checked");
}

TEST_F(PreflightTest, AHealthyWorkdirIsCreatedAndHasRoom) {
  CheckResult result = CheckWorkdir(request_);
  EXPECT_EQ(result.status, CheckStatus::kOk) << result.message;
  EXPECT_THAT(result.message, HasSubstr(" MiB free"));
  EXPECT_TRUE(FileExists(request_.state_dir));
}

TEST_F(PreflightTest, NotEnoughRoomForTheSyncFails) {
  request_.sync_bytes = uint64_t{1} << 60;
  CheckResult result = CheckWorkdir(request_);
  EXPECT_EQ(result.status, CheckStatus::kFail);
  EXPECT_THAT(result.message, HasSubstr("MiB free, the sync needs 1099511627776 MiB; expected "
                                        "at least the sync's size free; fix: free space"));
}

TEST_F(PreflightTest, AWorkdirUnderAFileCannotBeCreated) {
  ASSERT_THAT(WriteFileAtomic(dir_ + "/file", "", 0644), IsOk());
  request_.workdir = dir_ + "/file/work";
  request_.state_dir = request_.workdir + "/.fleetplan/nodes/a";
  CheckResult applied = CheckWorkdir(request_);
  EXPECT_EQ(applied.status, CheckStatus::kFail);
  EXPECT_THAT(applied.message, HasSubstr("cannot be created or written by"));
  request_.check_only = true;
  CheckResult checked = CheckWorkdir(request_);
  EXPECT_EQ(checked.status, CheckStatus::kFail);
  EXPECT_THAT(checked.message, HasSubstr(dir_ + "/file is not a folder"));
}

TEST_F(PreflightTest, CheckOnlyCreatesNothing) {
  request_.check_only = true;
  CheckResult result = CheckWorkdir(request_);
  EXPECT_EQ(result.status, CheckStatus::kOk) << result.message;
  EXPECT_THAT(result.message, HasSubstr("does not exist yet; "));
  EXPECT_FALSE(FileExists(request_.workdir));
}

TEST_F(PreflightTest, PythonSaysWhyItDidNotActivate) {
  request_.venv = dir_ + "/venv";
  Activation failed{Activation::Outcome::kFailed, "sh: 1: .: cannot open\n"};
  CheckResult missing = CheckPython(request_, failed);
  EXPECT_EQ(missing.status, CheckStatus::kFail);
  EXPECT_THAT(missing.message, HasSubstr(dir_ + "/venv does not exist; expected a python venv"));
  ASSERT_THAT(WriteFileAtomic(dir_ + "/venv/bin/activate", "if then\n", 0644), IsOk());
  CheckResult broken = CheckPython(request_, {Activation::Outcome::kFailed, "syntax error"});
  EXPECT_THAT(broken.message, HasSubstr("bin/activate fails: syntax error"));
  EXPECT_EQ(CheckPython(request_, {Activation::Outcome::kOk, ""}).status, CheckStatus::kOk);
  EXPECT_EQ(CheckPython(request_, {}).status, CheckStatus::kSkip);

  request_.venv.clear();
  request_.conda = "torch";
  request_.conda_sh = dir_ + "/conda.sh";
  EXPECT_THAT(CheckPython(request_, failed).message,
              HasSubstr(dir_ + "/conda.sh does not exist"));
}

TEST_F(PreflightTest, NcclRefusesLoAndWhatDoesNotResolve) {
  request_.nccl_env_file = request_.state_dir + "/preflight.env";
  std::vector<std::pair<std::string, std::string>> facts;
  for (const char* address : {"127.0.0.1", "localhost"}) {
    request_.nccl_address = address;
    CheckResult lo = CheckNccl(request_, &facts);
    EXPECT_EQ(lo.status, CheckStatus::kFail) << address;
    EXPECT_THAT(lo.message, HasSubstr("on lo; expected an interface the other nodes reach"));
  }
  request_.nccl_address = "no-such-host.invalid";
  CheckResult unresolved = CheckNccl(request_, &facts);
  EXPECT_EQ(unresolved.status, CheckStatus::kFail);
  EXPECT_THAT(unresolved.message, HasSubstr("no-such-host.invalid does not resolve on this node"));
  request_.nccl_address = "10.254.254.254";
  EXPECT_THAT(CheckNccl(request_, &facts).message, HasSubstr("no interface here holds"));
  EXPECT_TRUE(facts.empty());
  EXPECT_FALSE(FileExists(request_.nccl_env_file));
}

TEST_F(PreflightTest, TheChiefServesBothPortsAndConnectsToThem) {
  request_.listen_for = 1;
  auto [status, text] = Run();
  EXPECT_EQ(status, 0) << text;
  CheckOutput output = ParseCheckOutput(text);
  ASSERT_GE(output.checks.size(), 4u) << text;
  EXPECT_EQ(output.checks[0].check, "port");
  EXPECT_EQ(output.checks[0].status, CheckStatus::kOk);
  EXPECT_THAT(output.checks[0].message,
              HasSubstr(absl::StrCat("port ", request_.master_port, " (MASTER_PORT) and port ",
                                     request_.supervisor_port, " (supervisor_port): free")));
  EXPECT_THAT(output.facts, testing::Contains(Pair(
                                "listening", absl::StrCat(request_.master_port, " ",
                                                          request_.supervisor_port))));
  for (const CheckResult& result : output.checks) {
    EXPECT_NE(result.status, CheckStatus::kFail) << result.check << ": " << result.message;
  }
}

TEST_F(PreflightTest, ATakenSupervisorPortFailsNamingIt) {
  Fd squatter(BindAnyAddress(request_.supervisor_port));
  ASSERT_GE(squatter.get(), 0);
  request_.listen_for = 1;
  auto [status, text] = Run();
  EXPECT_EQ(status, 1) << text;
  CheckOutput output = ParseCheckOutput(text);
  ASSERT_FALSE(output.checks.empty());
  EXPECT_EQ(output.checks[0].status, CheckStatus::kFail);
  EXPECT_THAT(output.checks[0].message,
              HasSubstr(absl::StrCat("port ", request_.supervisor_port,
                                     ": in use on this node (bind: Address already in use); "
                                     "expected it free for the agents' supervision "
                                     "(supervisor_port); fix: ")));
  EXPECT_THAT(output.checks[0].message, HasSubstr("or choose another [job] supervisor_port"));
  EXPECT_THAT(text, Not(HasSubstr("fleetplan-fact listening")));
}

TEST_F(PreflightTest, ConnectNamesThePortThatRefused) {
  Fd master(BindAnyAddress(request_.master_port));
  ASSERT_GE(master.get(), 0);
  CheckResult result = CheckConnect(request_);
  EXPECT_EQ(result.status, CheckStatus::kFail);
  EXPECT_THAT(result.message, HasSubstr(absl::StrCat("port ", request_.master_port,
                                                     " (MASTER_PORT): connected to")));
  EXPECT_THAT(result.message, HasSubstr(absl::StrCat("port ", request_.supervisor_port,
                                                     " (supervisor_port): ")));
  EXPECT_THAT(result.message, HasSubstr(absl::StrCat("fix: allow TCP ports ",
                                                     request_.master_port, " and ",
                                                     request_.supervisor_port)));
}

TEST_F(PreflightTest, LibtorchIsIdentifiedByContentThroughLinks) {
  ASSERT_THAT(WriteFileAtomic(dir_ + "/libtorch_cpu.so.1.13.0", "not really a library", 0644),
              IsOk());
  ASSERT_EQ(symlink((dir_ + "/libtorch_cpu.so.1.13.0").c_str(),
                    (dir_ + "/libtorch_cpu.so.1.13").c_str()),
            0);
  std::string digest = Digester().AddBytes("not really a library", 20).Hex();
  EXPECT_THAT(LibtorchIdentity(dir_ + "/libtorch_cpu.so.1.13"),
              IsOkAndHolds(absl::StrCat(digest, " 20 ", dir_, "/libtorch_cpu.so.1.13.0")));
  EXPECT_THAT(LibtorchIdentity(dir_ + "/gone"), StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace fleetplan
