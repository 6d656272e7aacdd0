#include "plugins/slurm/slurm_connection.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "plugins/common/tar_stream.h"
#include "plugins/slurm/agent_step.h"
#include "plugins/slurm/shared_workdir.h"
#include "plugins/slurm/slurm_commands.h"
#include "plugins/slurm/state_here.h"
#include "plugins/slurm/temp_input.h"
#include "tools/process/files.h"
#include "tools/util/path_policy.h"
#include "tools/util/shell_quote.h"
#include "tools/util/status_macros.h"
#include "tools/util/timed_cancel.h"

namespace fleetplan {
namespace {

// The exit status a file read uses for "no such file".
constexpr int kMissing = 44;
// A sync's files, however many, travel in one step.
constexpr absl::Duration kPutTimeout = absl::Minutes(10);
// A brief command on the state step.
constexpr absl::Duration kBriefTimeout = absl::Seconds(60);

std::string JoinedArgv(const std::vector<std::string>& argv) {
  std::vector<std::string> words;
  for (const std::string& word : argv) words.push_back(ShellQuote(word));
  return absl::StrJoin(words, " ");
}

}  // namespace

absl::StatusOr<int> SlurmConnection::Run(const CommandSpec& command,
                                         const OutputCallback& on_output,
                                         const absl::Notification* cancel) {
  snapshot_.reset();
  if (command.launches_agent) {
    if (agents_ == nullptr) {
      return absl::InternalError(absl::StrCat(host_, ": this connection cannot launch agents"));
    }
    return agents_->Launch(*this, host_, agent_, command, on_output, cancel);
  }
  if (state_here_ && Brief(command)) return local_.Run(command, on_output, cancel);
  if (ForStateStep(command)) {
    if (cancel != nullptr && cancel->HasBeenNotified()) {
      return absl::CancelledError(absl::StrCat(host_, ": cancelled"));
    }
    std::string output;
    absl::StatusOr<int> status = state_step_->Run(command.command, &output, kBriefTimeout);
    if (!status.ok()) {
      return absl::UnavailableError(absl::StrCat(host_, ": ", status.status().message()));
    }
    if (on_output && !output.empty()) on_output(output);
    return status;
  }
  CommandSpec srun;
  srun.command = absl::StrCat("exec ", JoinedArgv(StepArgv(job_id_, host_, command)));
  srun.hold_stdin = command.hold_stdin;
  return local_.Run(srun, on_output, cancel);
}

absl::StatusOr<int> SlurmConnection::RunWithInput(const std::string& command,
                                                  const std::string& stdin_file,
                                                  std::string* output, absl::Duration timeout) {
  CommandSpec step;
  step.command = command;
  CommandSpec srun;
  srun.command = absl::StrCat("exec ", JoinedArgv(StepArgv(job_id_, host_, step)), " <",
                              ShellQuote(stdin_file.empty() ? "/dev/null" : stdin_file));
  TimedCancel bound(nullptr, timeout);
  absl::StatusOr<int> status = local_.Run(
      srun, [output](absl::string_view chunk) { output->append(chunk.data(), chunk.size()); },
      bound.get());
  if (bound.timed_out()) {
    return absl::DeadlineExceededError(absl::StrCat(
        host_, ": a job step did not end within ", absl::FormatDuration(timeout),
        " (is the node down? see sinfo -N)"));
  }
  return status;
}

absl::StatusOr<int> SlurmConnection::RunWithStdin(const std::string& command,
                                                  absl::string_view input, std::string* output,
                                                  absl::Duration timeout) {
  FP_ASSIGN_OR_RETURN(TempInput file, TempInput::Of(input));
  return RunWithInput(command, file.path(), output, timeout);
}

bool SlurmConnection::Brief(const CommandSpec& command) {
  return command.brief && command.env.empty() && command.cwd.empty() && !command.hold_stdin;
}

bool SlurmConnection::ForStateStep(const CommandSpec& command) const {
  return state_step_ != nullptr && state_step_->usable() && Brief(command);
}

std::optional<StateSnapshot> SlurmConnection::ReadSnapshot(const std::string& folder) {
  if (state_here_) {
    absl::StatusOr<StateSnapshot> here = ReadStateFolderHere(folder, job_id_);
    if (here.ok()) return *std::move(here);
  }
  if (state_step_ != nullptr && state_step_->usable()) {
    std::optional<StateSnapshot> read = state_step_->Snapshot();
    if (read.has_value() && read->folder() == folder) return read;
  }
  std::string output;
  absl::StatusOr<int> status = RunWithInput(SnapshotCommand(folder), "", &output);
  if (!status.ok() || *status != 0) return std::nullopt;
  absl::StatusOr<StateSnapshot> parsed = StateSnapshot::Parse(folder, output);
  if (!parsed.ok()) return std::nullopt;
  return *std::move(parsed);
}

std::optional<absl::StatusOr<std::string>> SlurmConnection::ReadFromSnapshot(
    const std::string& path) {
  std::string folder = StateFolderOf(path);
  if (folder.empty() || !SnapshotCovers(folder, path)) return std::nullopt;
  if (!snapshot_.has_value() || snapshot_->folder() != folder) {
    snapshot_ = ReadSnapshot(folder);
    if (!snapshot_.has_value()) return std::nullopt;
  }
  bool answered = false;
  std::optional<std::string> content = snapshot_->Take(path, &answered);
  if (!answered && state_here_) {
    // Read already (job.json): the folder is here, so read it afresh.
    snapshot_ = ReadSnapshot(folder);
    if (!snapshot_.has_value()) return std::nullopt;
    content = snapshot_->Take(path, &answered);
  }
  if (!answered) return std::nullopt;
  if (!content.has_value()) {
    return absl::StatusOr<std::string>(
        absl::NotFoundError(absl::StrCat(host_, ": ", path, ": no such file")));
  }
  return absl::StatusOr<std::string>(*std::move(content));
}

absl::StatusOr<std::string> SlurmConnection::ReadFile(const std::string& path) {
  if (std::optional<absl::StatusOr<std::string>> read = ReadFromSnapshot(path)) return *read;
  std::string output;
  FP_ASSIGN_OR_RETURN(
      int status,
      RunWithInput(absl::StrCat("[ -f ", ShellQuote(path), " ] || exit ", kMissing, "; exec cat -- ",
                                ShellQuote(path)),
                   "", &output));
  if (status == kMissing) {
    return absl::NotFoundError(absl::StrCat(host_, ": ", path, ": no such file"));
  }
  if (status != 0) {
    return absl::UnavailableError(
        absl::StrCat(host_, ": reading ", path, " failed (exit ", status, "): ", output));
  }
  return output;
}

absl::Status SlurmConnection::WriteFile(const std::string& path, absl::string_view content,
                                        uint32_t mode) {
  // A step record rewritten with what it holds (the sync's, after a sync
  // that changed nothing) costs no step. Files of the state folder are
  // written with one mode, so content decides.
  bool in_snapshot = snapshot_.has_value() && SnapshotCovers(snapshot_->folder(), path);
  if (in_snapshot && snapshot_->Holds(path, content)) return absl::OkStatus();
  absl::Status written = WriteNow(path, content, mode);
  if (written.ok() && in_snapshot) {
    snapshot_->Wrote(path, content);
  } else {
    snapshot_.reset();
  }
  return written;
}

absl::Status SlurmConnection::WriteNow(const std::string& path, absl::string_view content,
                                       uint32_t mode) {
  FP_ASSIGN_OR_RETURN(TempInput input, TempInput::Of(content));
  std::string dir = Dirname(path);
  std::string tmp = absl::StrCat(path, ".fleetplan-tmp");
  char octal[8];
  std::snprintf(octal, sizeof(octal), "%o", mode & 07777);
  std::string output;
  FP_ASSIGN_OR_RETURN(
      int status,
      // umask first: the file is never readable by others, not even
      // between cat creating it and chmod setting its mode.
      RunWithInput(absl::StrCat("umask 077 && mkdir -p ", ShellQuote(dir),
                                " && cat >",
                                ShellQuote(tmp), " && chmod ", octal, " ", ShellQuote(tmp),
                                " && mv -f ", ShellQuote(tmp), " ", ShellQuote(path)),
                   input.path(), &output));
  if (status != 0) {
    return absl::UnavailableError(
        absl::StrCat(host_, ": writing ", path, " failed (exit ", status, "): ", output));
  }
  return absl::OkStatus();
}

absl::Status SlurmConnection::PutFiles(const std::vector<FileToSend>& files,
                                       const std::string& remote_root) {
  return PutFilesCounting(files, remote_root).status();
}

absl::StatusOr<uint64_t> SlurmConnection::PutFilesCounting(const std::vector<FileToSend>& files,
                                                           const std::string& remote_root) {
  if (files.empty()) return 0;
  snapshot_.reset();
  auto put = [&](const std::vector<FileToSend>& missing) {
    return PutFilesNow(missing, remote_root);
  };
  if (shared_ != nullptr) return shared_->Put(files, remote_root, put);
  FP_RETURN_IF_ERROR(put(files));
  uint64_t bytes = 0;
  for (const FileToSend& file : files) bytes += file.size;
  return bytes;
}

absl::Status SlurmConnection::PutFilesNow(const std::vector<FileToSend>& files,
                                          const std::string& remote_root) {
  FP_ASSIGN_OR_RETURN(std::string tar, TarOfFiles(files));
  FP_ASSIGN_OR_RETURN(TempInput input, TempInput::Of(tar));
  std::string output;
  // Unlinking first: a running binary (the agent) is replaced, not written into.
  FP_ASSIGN_OR_RETURN(
      int status,
      RunWithInput(absl::StrCat("mkdir -p ", ShellQuote(remote_root), " && exec tar -x -f - -C ",
                                ShellQuote(remote_root),
                                " --unlink-first --no-same-owner"),
                   input.path(), &output, kPutTimeout));
  if (status != 0) {
    return absl::UnavailableError(absl::StrCat(host_, ": sending ", files.size(),
                                               " files to ", remote_root, " failed (exit ",
                                               status, "): ", output));
  }
  return absl::OkStatus();
}

absl::Status SlurmConnection::RemoveFiles(const std::string& remote_root,
                                          const std::vector<std::string>& paths) {
  if (paths.empty()) return absl::OkStatus();
  snapshot_.reset();
  std::string command = "rm -f --";
  for (const std::string& path : paths) {
    FP_ASSIGN_OR_RETURN(std::string target, JoinUnderRoot(remote_root, path));
    absl::StrAppend(&command, " ", ShellQuote(target));
  }
  std::string output;
  FP_ASSIGN_OR_RETURN(int status, RunWithInput(command, "", &output));
  if (status != 0) {
    return absl::UnavailableError(
        absl::StrCat(host_, ": removing files under ", remote_root, " failed: ", output));
  }
  return absl::OkStatus();
}

}  // namespace fleetplan
