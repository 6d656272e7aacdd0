#include "plugins/ssh/sshd_fixture.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "tools/process/files.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

bool Accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return ok;
}

}  // namespace

absl::StatusOr<std::string> RunToCompletion(const std::vector<std::string>& argv) {
  SubprocessOptions options;
  options.argv = argv;
  FP_ASSIGN_OR_RETURN(std::unique_ptr<Subprocess> process, Subprocess::Start(options));
  Subprocess* processes[] = {process.get()};
  std::string output;
  auto collect = [&](size_t, absl::string_view chunk) { output.append(chunk.data(), chunk.size()); };
  while (!process->TryWait().has_value() || process->output_open()) {
    PumpOutput(processes, {}, absl::Milliseconds(20), collect);
  }
  if (*process->exit_status() != 0) {
    return absl::InternalError(absl::StrCat(argv[0], " failed: ", output));
  }
  return output;
}

absl::Status MakeKeyPair(const std::string& path) {
  unlink(path.c_str());
  unlink((path + ".pub").c_str());
  return RunToCompletion({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "", "-f", path})
      .status();
}

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t size = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  close(fd);
  return ntohs(address.sin_port);
}

absl::StatusOr<std::unique_ptr<LocalSshd>> LocalSshd::Start(const std::string& dir) {
  std::unique_ptr<LocalSshd> sshd(new LocalSshd);
  std::string host_key = dir + "/host_key";
  sshd->client_key_ = dir + "/client_key";
  FP_RETURN_IF_ERROR(MakeKeyPair(host_key));
  FP_RETURN_IF_ERROR(MakeKeyPair(sshd->client_key_));
  FP_ASSIGN_OR_RETURN(sshd->host_public_key_, ReadFileToString(host_key + ".pub"));
  sshd->host_public_key_ = std::string(absl::StripAsciiWhitespace(sshd->host_public_key_));
  FP_ASSIGN_OR_RETURN(std::string listing, RunToCompletion({"ssh-keygen", "-l", "-f", host_key}));
  std::vector<std::string> fields = absl::StrSplit(listing, ' ');
  sshd->host_fingerprint_ = fields.size() > 1 ? fields[1] : "";
  FP_ASSIGN_OR_RETURN(std::string authorized, ReadFileToString(sshd->client_key_ + ".pub"));
  FP_RETURN_IF_ERROR(WriteFileAtomic(dir + "/authorized_keys", authorized, 0600));
  sshd->port_ = FreeLoopbackPort();
  std::string config = absl::StrCat(
      "Port ", sshd->port_, "\nListenAddress 127.0.0.1\nHostKey ", host_key,
      "\nAuthorizedKeysFile ", dir, "/authorized_keys\nPidFile none\nStrictModes no\n",
      "UsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n",
      "PermitRootLogin prohibit-password\nLogLevel ERROR\nMaxSessions 64\nMaxStartups 100\n",
      "Subsystem sftp /usr/lib/openssh/sftp-server\n");
  FP_RETURN_IF_ERROR(WriteFileAtomic(dir + "/sshd_config", config, 0600));
  mkdir("/run/sshd", 0755);  // privilege separation directory
  SubprocessOptions options;
  options.argv = {"/usr/sbin/sshd", "-D", "-e", "-f", dir + "/sshd_config"};
  FP_ASSIGN_OR_RETURN(sshd->sshd_, Subprocess::Start(options));
  absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!Accepts(sshd->port_)) {
    if (sshd->sshd_->TryWait().has_value() || absl::Now() > deadline) {
      std::string output;
      sshd->sshd_->ReadOutput([&](absl::string_view chunk) { output.append(chunk.data(), chunk.size()); });
      return absl::InternalError(absl::StrCat("sshd did not start: ", output));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return sshd;
}

std::string LocalSshd::KnownHostsLine() const {
  return absl::StrCat("[127.0.0.1]:", port_, " ", host_public_key_, "\n");
}

}  // namespace fleetplan
