#include "plugins/docker/docker_connection.h"

#include <cstdint>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "plugins/common/tar_stream.h"
#include "plugins/docker/exec_stream.h"
#include "tools/util/path_policy.h"
#include "tools/util/shell_quote.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

constexpr absl::Duration kPumpInterval = absl::Milliseconds(100);
// rm arguments per exec: well under the kernel's argument limit.
constexpr size_t kRemoveBatchBytes = 64 * 1024;

// Signals every process whose environment holds the token: the command,
// and what it started, even what left its process group. All are stopped
// first, so a shell cannot run on after its child died and before its own
// signal arrives; the signal acts when they continue.
constexpr char kSignalScript[] =
    "sig=$1; tok=$2; pids=; for d in /proc/[0-9]*; do "
    "tr '\\000' '\\n' <\"$d/environ\" 2>/dev/null | "
    "grep -qxF \"FLEETPLAN_DOCKER_EXEC=$tok\" && pids=\"$pids ${d#/proc/}\"; "
    "done; [ -n \"$pids\" ] || exit 0; "
    "kill -s STOP $pids 2>/dev/null; kill -s \"$sig\" $pids 2>/dev/null; "
    "kill -s CONT $pids 2>/dev/null; true";

std::string NewToken() {
  static absl::BitGen* gen = new absl::BitGen;
  static absl::Mutex mu(absl::kConstInit);
  absl::MutexLock lock(&mu);
  return absl::StrFormat("%016x", absl::Uniform<uint64_t>(*gen));
}

nlohmann::json ExecConfig(const std::vector<std::string>& argv,
                          const EnvList& env, const std::string& token,
                          const std::string& cwd, bool attach_stdin) {
  nlohmann::json env_json = nlohmann::json::array();
  for (const auto& [key, value] : env) env_json.push_back(key + "=" + value);
  if (!token.empty()) {
    env_json.push_back(absl::StrCat(kExecTokenVariable, "=", token));
  }
  nlohmann::json config = {{"AttachStdin", attach_stdin},
                           {"AttachStdout", true},
                           {"AttachStderr", true},
                           {"Tty", false},
                           {"Cmd", argv},
                           {"Env", env_json}};
  if (!cwd.empty()) config["WorkingDir"] = cwd;
  return config;
}

}  // namespace

absl::StatusOr<int> DockerConnection::Run(const CommandSpec& command,
                                          const OutputCallback& on_output,
                                          const absl::Notification* cancel) {
  std::string token = NewToken();
  FP_ASSIGN_OR_RETURN(
      std::string id,
      client_->CreateExec(
          container_,
          ExecConfig({"/bin/sh", "-c", command.command}, command.env, token,
                     command.cwd, command.hold_stdin)));
  FP_ASSIGN_OR_RETURN(std::unique_ptr<ExecStream> stream,
                      ExecStream::Start(*client_, id, container_));
  // Cancel escalates: stdin closed, then SIGTERM, then SIGKILL.
  enum class Stage { kRunning, kStdinClosed, kTermSent, kKillSent };
  Stage stage = Stage::kRunning;
  absl::Time deadline = absl::InfiniteFuture();
  for (;;) {
    FP_ASSIGN_OR_RETURN(bool done, stream->Pump(kPumpInterval, on_output));
    if (done) break;
    if (cancel == nullptr || !cancel->HasBeenNotified()) continue;
    absl::Time now = absl::Now();
    if (stage == Stage::kRunning) {
      stream->CloseStdin();
      stage = Stage::kStdinClosed;
      deadline = now + StdinGraceFor(command, options_.stdin_grace);
    } else if (stage == Stage::kStdinClosed && now >= deadline) {
      SignalRun(token, "TERM");
      stage = Stage::kTermSent;
      deadline = now + options_.term_grace;
    } else if (stage == Stage::kTermSent && now >= deadline) {
      SignalRun(token, "KILL");
      stage = Stage::kKillSent;
      deadline = now + absl::Seconds(5);
    } else if (stage == Stage::kKillSent && now >= deadline) {
      return absl::UnavailableError(absl::StrCat(
          "node ", container_, ": command did not end after SIGKILL"));
    }
  }
  return ExitStatus(id);
}

absl::StatusOr<int> DockerConnection::ExitStatus(const std::string& exec_id) {
  // The stream ends a moment before the daemon records the exit.
  for (int attempt = 0; attempt < 100; ++attempt) {
    absl::StatusOr<nlohmann::json> inspect = client_->InspectExec(exec_id);
    if (absl::IsNotFound(inspect.status())) {
      return absl::UnavailableError(absl::StrCat(
          "node ", container_, ": container is gone (removed while running)"));
    }
    FP_RETURN_IF_ERROR(inspect.status());
    if (!inspect->value("Running", false) && (*inspect)["ExitCode"].is_number()) {
      return (*inspect)["ExitCode"].get<int>();
    }
    absl::SleepFor(absl::Milliseconds(attempt < 10 ? 2 : 20));
  }
  absl::StatusOr<nlohmann::json> container = client_->InspectContainer(container_);
  if (!container.ok() || !(*container)["State"].value("Running", false)) {
    return absl::UnavailableError(absl::StrCat(
        "node ", container_, ": container stopped while running the command"));
  }
  return absl::InternalError(absl::StrCat(
      "node ", container_, ": exec ", exec_id, " ended without an exit code"));
}

absl::StatusOr<int> DockerConnection::RunArgv(
    const std::vector<std::string>& argv, std::string* output) {
  FP_ASSIGN_OR_RETURN(std::string id,
                      client_->CreateExec(container_,
                                          ExecConfig(argv, {}, "", "", false)));
  FP_ASSIGN_OR_RETURN(std::unique_ptr<ExecStream> stream,
                      ExecStream::Start(*client_, id, container_));
  OutputCallback collect = [output](absl::string_view chunk) {
    if (output != nullptr) output->append(chunk.data(), chunk.size());
  };
  for (;;) {
    FP_ASSIGN_OR_RETURN(bool done, stream->Pump(absl::Seconds(1), collect));
    if (done) break;
  }
  return ExitStatus(id);
}

absl::Status DockerConnection::RunScript(const std::string& script,
                                         absl::string_view what) {
  std::string output;
  FP_ASSIGN_OR_RETURN(int status, RunArgv({"/bin/sh", "-c", script}, &output));
  if (status != 0) {
    return absl::InternalError(absl::StrCat("node ", container_, ": ", what,
                                            " failed (exit ", status,
                                            "): ", output));
  }
  return absl::OkStatus();
}

void DockerConnection::SignalRun(const std::string& token, const char* signal) {
  // Best effort: the process may be gone already; the caller's deadline
  // escalates if this does not stop it.
  RunArgv({"/bin/sh", "-c", kSignalScript, "fleetplan-signal", signal, token},
          nullptr)
      .IgnoreError();
}

absl::StatusOr<std::string> DockerConnection::ReadFile(const std::string& path) {
  FP_ASSIGN_OR_RETURN(std::string tar, client_->GetArchive(container_, path));
  absl::StatusOr<std::string> content = FirstFileOfTar(tar);
  if (!content.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "read ", path, " on node ", container_, ": ", content.status().message()));
  }
  return content;
}

absl::Status DockerConnection::WriteFile(const std::string& path,
                                         absl::string_view content,
                                         uint32_t mode) {
  if (path.empty() || path[0] != '/' || path.back() == '/') {
    return absl::InvalidArgumentError(absl::StrCat(
        "write on node ", container_, ": need an absolute file path, got '",
        path, "'"));
  }
  std::string temp = HiddenBeside(path, absl::StrCat(".fleetplan-", NewToken()));
  FP_ASSIGN_OR_RETURN(std::string tar,
                      TarOfOneFile(temp.substr(1), content, mode));
  FP_RETURN_IF_ERROR(client_->PutArchive(container_, "/", tar));
  absl::Status renamed = RunScript(
      absl::StrCat("mv -f -- ", ShellQuote(temp), " ", ShellQuote(path),
                   " || { rm -f -- ", ShellQuote(temp), "; exit 1; }"),
      absl::StrCat("rename into ", path));
  return renamed;
}

absl::Status DockerConnection::PutFiles(const std::vector<FileToSend>& files,
                                        const std::string& remote_root) {
  if (files.empty()) return absl::OkStatus();
  FP_ASSIGN_OR_RETURN(std::string tar, TarOfFiles(files));
  absl::Status put = client_->PutArchive(container_, remote_root, tar);
  // The root usually exists after the first sync; create it only when not.
  if (absl::IsNotFound(put)) {
    FP_RETURN_IF_ERROR(RunScript(
        absl::StrCat("mkdir -p -- ", ShellQuote(remote_root)),
        absl::StrCat("create ", remote_root)));
    put = client_->PutArchive(container_, remote_root, tar);
  }
  return put;
}

absl::Status DockerConnection::RemoveFiles(
    const std::string& remote_root, const std::vector<std::string>& paths) {
  size_t next = 0;
  while (next < paths.size()) {
    // A missing root means the files are missing too, which is fine.
    std::string script = absl::StrCat("cd -- ", ShellQuote(remote_root),
                                      " 2>/dev/null || exit 0; exec rm -f --");
    size_t base = script.size();
    while (next < paths.size() &&
           (script.size() == base ||
            script.size() + paths[next].size() < kRemoveBatchBytes)) {
      const std::string& path = paths[next++];
      absl::Status under_root = CheckStaysUnderRoot(remote_root, path);
      if (!under_root.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "remove on node ", container_, ": ", under_root.message()));
      }
      absl::StrAppend(&script, " ", ShellQuote(path));
    }
    FP_RETURN_IF_ERROR(RunScript(script, "remove files"));
  }
  return absl::OkStatus();
}

}  // namespace fleetplan
