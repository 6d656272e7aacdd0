#include "tools/agent/preflight.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tools/agent/probe.h"
#include "tools/agent/program_check.h"
#include "tools/agent/shared_libraries.h"
#include "tools/agent/sockets.h"
#include "tools/process/files.h"
#include "tools/process/exec_args.h"
#include "tools/process/subprocess.h"
#include "tools/sync/manifest.h"
#include "tools/util/digest.h"
#include "tools/util/path_policy.h"

namespace fleetplan {
namespace {

constexpr absl::Duration kNvidiaSmiTimeout = absl::Seconds(60);
// The chief serves its ports until the other nodes are done (apply closes
// its stdin); this only bounds a listener nobody stops.
constexpr absl::Duration kServeAtMost = absl::Hours(24);

CheckResult Result(absl::string_view check, CheckStatus status, std::string message) {
  return {std::string(check), status, std::move(message)};
}

std::array<PortRole, 2> ChiefPorts(const PreflightRequest& request) {
  return {{{request.master_port, "the rendezvous (MASTER_PORT)", "[network] master_port"},
           {request.supervisor_port, "the agents' supervision (supervisor_port)",
            "[job] supervisor_port"}}};
}

// "port 29500 (MASTER_PORT)"
std::string PortName(int port, bool master) {
  return absl::StrCat("port ", port, master ? " (MASTER_PORT)" : " (supervisor_port)");
}


// The address `name` stands for on this node: itself when it is one, else
// its first IPv4 address, else its first address of any kind.
absl::StatusOr<std::string> ResolveHere(const std::string& name) {
  in6_addr v6;
  in_addr v4;
  if (inet_pton(AF_INET, name.c_str(), &v4) == 1 || inet_pton(AF_INET6, name.c_str(), &v6) == 1) {
    return name;
  }
  int last = 0;
  for (int family : {AF_INET, AF_UNSPEC}) {
    addrinfo hints{};
    hints.ai_family = family;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    last = getaddrinfo(name.c_str(), nullptr, &hints, &found);
    if (last != 0) continue;
    char text[INET6_ADDRSTRLEN] = "";
    const sockaddr* address = found->ai_addr;
    const void* raw = address->sa_family == AF_INET
                          ? static_cast<const void*>(
                                &reinterpret_cast<const sockaddr_in*>(address)->sin_addr)
                          : &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr;
    inet_ntop(address->sa_family, raw, text, sizeof(text));
    freeaddrinfo(found);
    return std::string(text);
  }
  return absl::NotFoundError(gai_strerror(last));
}

bool UsableIfname(absl::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == ':' || c == '@' || c == '-';
  });
}

}  // namespace

CheckResult CheckPython(const PreflightRequest& request, const Activation& activation) {
  bool venv = !request.venv.empty();
  std::string what = venv ? absl::StrCat("venv ", request.venv)
                          : absl::StrCat("conda environment ", request.conda);
  switch (activation.outcome) {
    case Activation::Outcome::kOk:
      return Result(kCheckPython, CheckStatus::kOk, absl::StrCat(what, " activates"));
    case Activation::Outcome::kNotRun:
      return Result(kCheckPython, CheckStatus::kSkip,
                    absl::StrCat(what, " not checked: the preflight did not activate it"));
    case Activation::Outcome::kFailed:
      break;
  }
  std::string output(absl::StripAsciiWhitespace(activation.output));
  struct stat st;
  std::string message;
  if (venv) {
    const std::string& dir = request.venv;
    std::string activate = absl::StrCat(dir, "/bin/activate");
    if (stat(activate.c_str(), &st) != 0) {
      message = absl::StrCat(
          "venv ", dir, stat(dir.c_str(), &st) == 0 ? " has no bin/activate" : " does not exist",
          "; expected a python venv at ", dir, " on every node; fix: create it there (python3 "
          "-m venv ", dir, ") and install the job's packages into it, or correct python.venv");
    } else {
      message = absl::StrCat("venv ", dir, ": bin/activate fails: ", output,
                             "; expected it to activate; fix: create the venv again");
    }
  } else if (stat(request.conda_sh.c_str(), &st) != 0) {
    message = absl::StrCat("conda.sh ", request.conda_sh, " does not exist; expected conda's "
                           "shell setup there; fix: correct python.conda_sh (<conda "
                           "root>/etc/profile.d/conda.sh)");
  } else {
    message = absl::StrCat("conda activate ", request.conda, " fails: ", output,
                           "; expected the environment ", request.conda, " to exist; fix: "
                           "create it (conda create -n ", request.conda, ") or correct "
                           "python.conda");
  }
  return Result(kCheckPython, CheckStatus::kFail, message);
}

CheckResult CheckConnect(const PreflightRequest& request) {
  const std::string& host = request.chief_address;
  std::string target_host = absl::StrContains(host, ':') ? absl::StrCat("[", host, "]") : host;
  int ports[2] = {request.master_port, request.supervisor_port};
  absl::StatusOr<std::string> answers[2];
  std::thread supervisor([&] {
    answers[1] =
        ConnectProbe(absl::StrCat(target_host, ":", ports[1]), request.connect_timeout);
  });
  answers[0] = ConnectProbe(absl::StrCat(target_host, ":", ports[0]), request.connect_timeout);
  supervisor.join();
  std::vector<std::string> said;
  bool failed = false;
  for (int i = 0; i < 2; ++i) {
    failed |= !answers[i].ok();
    said.push_back(absl::StrCat(PortName(ports[i], i == 0), ": ",
                                answers[i].ok() ? *answers[i] : answers[i].status().message()));
  }
  if (!failed) return Result(kCheckConnect, CheckStatus::kOk, absl::StrJoin(said, "; "));
  return Result(kCheckConnect, CheckStatus::kFail,
                absl::StrCat(absl::StrJoin(said, "; "),
                             "; expected TCP connections from this node to the chief at "
                             "MASTER_PORT and supervisor_port; fix: allow TCP ports ",
                             ports[0], " and ", ports[1], " into the chief from this node "
                             "(firewall, security group), and make ", host, " the chief's "
                             "address on the network the nodes share (its private_address)"));
}

CheckResult CheckNccl(const PreflightRequest& request,
                      std::vector<std::pair<std::string, std::string>>* facts) {
  const std::string& name = request.nccl_address;
  auto not_found = [&](CheckStatus status, std::string message) {
    // A stale file would give the ranks an interface this check did not find.
    if (!request.check_only) unlink(request.nccl_env_file.c_str());
    return Result(kCheckNccl, status, std::move(message));
  };
  absl::StatusOr<std::string> ip = ResolveHere(name);
  if (!ip.ok()) {
    return not_found(CheckStatus::kFail,
                     absl::StrCat(name, " does not resolve on this node (", ip.status().message(),
                                  "); expected the address the other nodes reach it by; fix: "
                                  "add ", name, " to /etc/hosts or DNS here, or set the node's "
                                  "private_address to its IP address"));
  }
  absl::StatusOr<std::string> ifname = InterfaceHolding(*ip);
  if (absl::IsNotFound(ifname.status())) {
    return not_found(CheckStatus::kFail,
                     absl::StrCat("no interface here holds ", *ip, " (what ", name, " is on "
                                  "this node); expected the interface with the address the "
                                  "other nodes reach this node by; fix: set the node's "
                                  "private_address to one of its addresses (ip -4 addr), or "
                                  "set nccl_socket_ifname"));
  }
  if (!ifname.ok()) {
    return not_found(CheckStatus::kSkip,
                     absl::StrCat("cannot list this node's interfaces (",
                                  ifname.status().message(), "); NCCL_SOCKET_IFNAME not "
                                  "found; fix: set nccl_socket_ifname"));
  }
  if (*ifname == "lo" || *ifname == "docker0") {
    return not_found(CheckStatus::kFail,
                     absl::StrCat(name, " is ", *ip, " here, on ", *ifname, "; expected an "
                                  "interface the other nodes reach, never lo or docker0; fix: "
                                  "set the node's private_address to its address on the "
                                  "network the nodes share, or set nccl_socket_ifname"));
  }
  if (!UsableIfname(*ifname)) {
    return not_found(CheckStatus::kFail,
                     absl::StrCat(*ip, " is on interface '", *ifname, "', a name "
                                  "NCCL_SOCKET_IFNAME cannot carry; fix: set "
                                  "nccl_socket_ifname"));
  }
  if (!request.check_only) {
    absl::Status written = WriteFileAtomic(
        request.nccl_env_file, absl::StrCat("export NCCL_SOCKET_IFNAME=", *ifname, "\n"), 0600);
    if (!written.ok()) {
      return not_found(CheckStatus::kFail,
                       absl::StrCat("cannot write ", request.nccl_env_file, ": ",
                                    written.message(), "; expected the node's state folder to "
                                    "be writable; fix: check the workdir"));
    }
  }
  facts->emplace_back(kFactNcclIfname, *ifname);
  return Result(kCheckNccl, CheckStatus::kOk, absl::StrCat(*ifname, " holds ", *ip, " (", name, ")"));
}

CheckResult CheckGpus(const std::vector<int>& gpus, const std::string& path) {
  std::string listed = absl::StrJoin(gpus, ", ");
  std::string not_checked = absl::StrCat("; GPU ids ", listed, " not checked");
  std::string smi = FindProgram("nvidia-smi", path).value_or("");
  if (smi.empty()) {
    return Result(kCheckGpus, CheckStatus::kSkip,
                  absl::StrCat("no nvidia-smi on the ranks' PATH", not_checked));
  }
  SubprocessOptions run;
  run.argv = {smi, "--query-gpu=index", "--format=csv,noheader"};
  absl::StatusOr<Completed> done = RunToCompletion(run, kNvidiaSmiTimeout);
  if (!done.ok()) {
    return Result(kCheckGpus, CheckStatus::kSkip,
                  absl::StrCat("cannot run ", smi, ": ", done.status().message(), not_checked));
  }
  std::string output(absl::StripAsciiWhitespace(done->output));
  if (done->timed_out) {
    return Result(kCheckGpus, CheckStatus::kSkip,
                  absl::StrCat(smi, " did not answer within ",
                               absl::FormatDuration(kNvidiaSmiTimeout), not_checked));
  }
  if (done->status != 0) {
    return Result(kCheckGpus, CheckStatus::kFail,
                  absl::StrCat("nvidia-smi fails (exit status ", done->status, "): ", output,
                               "; expected it to list this node's GPUs; fix: check the NVIDIA "
                               "driver here (nvidia-smi)"));
  }
  std::vector<int> have;
  for (absl::string_view line : absl::StrSplit(output, '\n', absl::SkipWhitespace())) {
    int id;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &id)) {
      return Result(kCheckGpus, CheckStatus::kSkip,
                    absl::StrCat("nvidia-smi printed '", absl::StripAsciiWhitespace(line),
                                 "', not a GPU index", not_checked));
    }
    have.push_back(id);
  }
  std::vector<int> missing;
  for (int id : gpus) {
    if (std::find(have.begin(), have.end(), id) == have.end()) missing.push_back(id);
  }
  std::string lists = have.empty() ? "none" : absl::StrJoin(have, ",");
  if (!missing.empty()) {
    return Result(kCheckGpus, CheckStatus::kFail,
                  absl::StrCat("GPU ", absl::StrJoin(missing, ", "), " not found: nvidia-smi "
                               "lists ", lists, "; expected every id in gpus = [", listed,
                               "]; fix: list only GPUs this node has in its gpus"));
  }
  return Result(kCheckGpus, CheckStatus::kOk,
                absl::StrCat("GPUs ", listed, " present (nvidia-smi lists ", lists, ")"));
}

absl::StatusOr<std::string> LibtorchIdentity(const std::string& path) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) {
    return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  Fd fd(open(resolved, O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    return absl::PermissionDeniedError(absl::StrCat(resolved, ": ", std::strerror(errno)));
  }
  Digester digest;
  uint64_t size = 0;
  std::vector<char> buffer(1 << 20);
  while (true) {
    ssize_t n = read(fd.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::UnavailableError(absl::StrCat(resolved, ": ", std::strerror(errno)));
    if (n == 0) break;
    digest.AddBytes(buffer.data(), n);
    size += n;
  }
  return absl::StrCat(digest.Hex(), " ", size, " ", resolved);
}

namespace {

// Where the checks' lines go, and whether one failed.
class CheckPrinter {
 public:
  explicit CheckPrinter(std::FILE* out) : out_(out) {}
  void Check(const CheckResult& result) {
    Line(FormatCheckLine(result));
    failed_ |= result.status == CheckStatus::kFail;
  }
  void Fact(absl::string_view name, absl::string_view value) {
    Line(FormatFactLine(name, value));
  }
  bool failed() const { return failed_; }

 private:
  void Line(const std::string& line) {
    std::fprintf(out_, "%s\n", line.c_str());
    std::fflush(out_);
  }
  std::FILE* out_;
  bool failed_ = false;
};

// The chief's ports: bound, then served (`serving`) until every node's
// connect check came, so that the connect checks, this node's too, find
// them. `listeners` keeps them open meanwhile.
void ListenOnTheChiefsPorts(const PreflightRequest& request, int stop_fd, CheckPrinter& print,
                            std::vector<Fd>* listeners, std::thread* serving) {
  std::vector<std::string> problems;
  for (const PortRole& role : ChiefPorts(request)) {
    int bound = BindAnyAddress(role.port);
    if (bound < 0) problems.push_back(BindFailure(role, -bound));
    else listeners->emplace_back(bound);
  }
  if (!problems.empty()) {
    listeners->clear();
    print.Check(Result(kCheckPort, CheckStatus::kFail, absl::StrJoin(problems, "; ")));
    return;
  }
  print.Check(Result(kCheckPort, CheckStatus::kOk,
                     absl::StrCat(PortName(request.master_port, true), " and ",
                                  PortName(request.supervisor_port, false),
                                  ": free; listening until the ", request.listen_for,
                                  " nodes have connected")));
  print.Fact(kFactListening, absl::StrCat(request.master_port, " ", request.supervisor_port));
  std::vector<int> fds;
  for (const Fd& listener : *listeners) fds.push_back(listener.get());
  *serving = std::thread(
      [fds, &request, stop_fd] { ServeListeners(fds, request.listen_for, kServeAtMost, stop_fd); });
}

// The program as the ranks' PATH finds it, the shared libraries it loads,
// and which LibTorch among them.
void CheckTheProgram(const PreflightRequest& request, const std::string& path,
                     CheckPrinter& print) {
  ProgramFindings program = CheckProgram(request.program, path);
  print.Check(program.check);
  if (program.fact.has_value()) print.Fact(program.fact->first, program.fact->second);
  if (program.interpreter_skipped.has_value()) print.Check(*program.interpreter_skipped);
  LibrariesResult libraries =
      CheckLibraries({program.resolved.empty() ? request.program : program.resolved,
                      request.check_only, ""});
  print.Check(libraries.check);
  for (const auto& [name, library] : libraries.resolved) {
    if (!absl::StartsWith(name, "libtorch_cpu.so")) continue;
    absl::StatusOr<std::string> identity = LibtorchIdentity(library);
    if (identity.ok()) {
      print.Fact(kFactLibtorch, *identity);
    } else {
      print.Check(Result(kCheckLibtorch, CheckStatus::kSkip,
                         absl::StrCat("cannot read ", identity.status().message(),
                                      "; the same LibTorch on every node not checked")));
    }
    break;
  }
}

}  // namespace

int RunPreflight(const PreflightRequest& request, const Activation& activation, int stop_fd,
                 std::FILE* out) {
  CheckPrinter print(out);
  std::vector<Fd> listeners;
  std::thread serving;
  if (request.listen_for > 0) {
    ListenOnTheChiefsPorts(request, stop_fd, print, &listeners, &serving);
  }
  print.Check(CheckWorkdir(request));
  if (!request.venv.empty() || !request.conda.empty()) {
    print.Check(CheckPython(request, activation));
  }
  print.Check(CheckConnect(request));
  if (!request.nccl_address.empty()) {
    std::vector<std::pair<std::string, std::string>> facts;
    print.Check(CheckNccl(request, &facts));
    for (const auto& [name, value] : facts) print.Fact(name, value);
  }
  // The ranks' PATH: the program and nvidia-smi are looked up as they will be.
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env == nullptr ? "" : path_env;
  if (!request.gpus.empty()) print.Check(CheckGpus(request.gpus, path));
  CheckTheProgram(request, path, print);
  if (serving.joinable()) serving.join();
  return print.failed() ? 1 : 0;
}

}  // namespace fleetplan
