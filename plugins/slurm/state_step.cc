#include "plugins/slurm/state_step.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "plugins/slurm/slurm_commands.h"
#include "tools/util/shell_quote.h"

namespace fleetplan {
namespace {

// How long the step is given to end once the chief's stdin closed.
constexpr absl::Duration kEndWait = absl::Seconds(5);
// How long a snapshot request may take on the chief.
constexpr absl::Duration kSnapshotWait = absl::Seconds(60);
// What ends an answer's output: the command's exit status follows it.
constexpr char kStatusMark[] = "@s";

// Each answer of the step's tasks leaves in one write (collected in a
// variable, then one printf): srun's connection to a node's step carries
// it, and a second small write behind a first waited there for the first's
// acknowledgement, which the login node delays by 40 ms (Nagle's algorithm
// against delayed ACKs): each request of a long-lived step cost that much.

// Into $s: a folder's files as EveryHostSnapshotCommand prints them for
// one host, after "@host NAME" (PrintFolder).
std::string ReadFolder(const std::string& folder) {
  return absl::StrCat("s=$( (", SnapshotCommand(folder),
                      ") </dev/null | base64 -w 512 && echo @end || echo @failed)");
}

// Prints "@host NAME" and $s, then the lines of `then` (each ending "\n"),
// in one write.
std::string PrintFolder(absl::string_view then = "") {
  return absl::StrCat("printf '@host %s\\n%s\\n", then, "' \"$SLURMD_NODENAME\" \"$s\"");
}

}  // namespace

std::string StateStepCommand(const std::map<std::string, std::string>& folders,
                             const std::string& chief) {
  std::string command = "case \"$SLURMD_NODENAME\" in\n";
  for (const auto& [host, folder] : folders) {
    if (host != chief) {
      absl::StrAppend(&command, ShellQuote(host), ")\n", MarkFolderCommand(folder), "  ",
                      ReadFolder(folder), "; ", PrintFolder(), " ;;\n");
      continue;
    }
    // The chief prints its folder with the others' and keeps it ($s0):
    // asked again (under the apply lock), it answers "@same" when the
    // folder reads the same, a line instead of the folder (which, longer
    // than one message of srun's I/O, waited 40 ms more on the connection).
    // The command's output and status in one base64 stream (its lines,
    // however long, cannot be cut by another task's under --label).
    absl::StrAppend(&command, ShellQuote(host), ")\n", MarkFolderCommand(folder), "  ",
                    ReadFolder(folder), "; s0=$s\n  ", PrintFolder("@chief\\n"), "\n",
                    "  while IFS= read -r r; do\n    case \"$r\" in\n    @snapshot) ",
                    ReadFolder(folder), "; if [ \"$s\" = \"$s0\" ]; then echo @same; else ",
                    PrintFolder(), "; fi",
                    " ;;\n    *) a=$(echo @run; { (eval \"$(printf %s \"$r\" | base64 -d)\") "
                    "</dev/null 2>&1; echo \"",
                    kStatusMark,
                    "$?\"; } | base64 -w 512; echo @done); printf '%s\\n' \"$a\" ;;\n"
                    "    esac\n  done ;;\n");
  }
  absl::StrAppend(&command, "esac\n");
  return command;
}

absl::StatusOr<std::pair<int, std::string>> ParseRunAnswer(const std::string& base64) {
  std::string decoded;
  if (!absl::Base64Unescape(base64, &decoded)) {
    return absl::InvalidArgumentError("the state step's answer is not base64");
  }
  // The status is printed last, after whatever the command printed.
  size_t mark = decoded.rfind(kStatusMark);
  int status = 0;
  if (mark == std::string::npos ||
      !absl::SimpleAtoi(
          absl::StripAsciiWhitespace(absl::string_view(decoded).substr(mark + 2)), &status)) {
    return absl::InvalidArgumentError("the state step's answer has no exit status");
  }
  decoded.resize(mark);
  return std::make_pair(status, std::move(decoded));
}

absl::StatusOr<std::unique_ptr<StateStep>> StateStep::Start(
    const std::string& job_id, const std::map<std::string, std::string>& folders,
    const std::string& chief, absl::Duration wait) {
  std::vector<std::string> hosts;
  for (const auto& [host, folder] : folders) hosts.push_back(host);
  SubprocessOptions options;
  options.argv = EveryNodeArgv(job_id, hosts, StateStepCommand(folders, chief));
  options.stdin_pipe = true;
  // A pool thread connects; the step serves the chief's connection after.
  options.dies_with_thread = false;
  absl::StatusOr<std::unique_ptr<Subprocess>> srun = Subprocess::Start(options);
  if (!srun.ok()) return srun.status();
  std::unique_ptr<StateStep> step(new StateStep(*std::move(srun), folders, chief));
  // Every host prints its folder; the other hosts end, the chief says it
  // is there.
  const absl::Time deadline = absl::Now() + wait;
  while (step->chief_task_.empty() || step->folders_ended_ < static_cast<int>(folders.size())) {
    absl::StatusOr<LabeledLine> line = step->NextLine(deadline);
    if (!line.ok()) return line.status();
    if (line->text == "@chief") {
      step->chief_task_ = line->task;
    } else {
      step->FileFolderLine(*line);
    }
  }
  step->others_ = ParseEveryHostSnapshot(folders, step->folders_output_);
  step->folders_output_.clear();
  if (auto found = step->others_.find(chief); found != step->others_.end()) {
    step->chief_first_ = std::move(found->second);
    step->others_.erase(found);
  }
  return step;
}

StateStep::~StateStep() {
  srun_->CloseStdin();
  const absl::Time deadline = absl::Now() + kEndWait;
  Subprocess* processes[] = {srun_.get()};
  while (!srun_->TryWait().has_value() && absl::Now() < deadline) {
    absl::Duration poll = srun_->output_open() ? absl::Milliseconds(100) : absl::Milliseconds(1);
    PumpOutput(processes, {}, std::min(poll, deadline - absl::Now()),
               [](size_t, absl::string_view) {});
  }
  // Past the wait, the Subprocess's end kills what is left.
}

void StateStep::FileFolderLine(const LabeledLine& line) {
  absl::StrAppend(&folders_output_, line.task, ": ", line.text, "\n");
  if (line.text == "@end" || line.text == "@failed") ++folders_ended_;
}

absl::StatusOr<LabeledLine> StateStep::NextLine(absl::Time deadline) {
  Subprocess* processes[] = {srun_.get()};
  while (lines_.empty()) {
    if (!srun_->output_open()) {
      broken_ = true;
      return absl::UnavailableError("the state step ended");
    }
    if (absl::Now() >= deadline) {
      broken_ = true;
      return absl::UnavailableError("the state step did not answer in time");
    }
    PumpOutput(processes, {}, std::min(absl::Milliseconds(100), deadline - absl::Now()),
               [this](size_t, absl::string_view chunk) {
                 absl::StrAppend(&pending_, chunk);
                 size_t end;
                 while ((end = pending_.find('\n')) != std::string::npos) {
                   absl::string_view line(pending_.data(), end);
                   size_t colon = line.find(": ");
                   if (colon != absl::string_view::npos) {
                     lines_.push_back({std::string(absl::StripAsciiWhitespace(
                                           line.substr(0, colon))),
                                       std::string(line.substr(colon + 2))});
                   }
                   pending_.erase(0, end + 1);
                 }
               });
  }
  LabeledLine line = std::move(lines_.front());
  lines_.erase(lines_.begin());
  return line;
}

absl::StatusOr<std::string> StateStep::ChiefLine(absl::Time deadline) {
  while (true) {
    absl::StatusOr<LabeledLine> line = NextLine(deadline);
    if (!line.ok()) return line.status();
    if (line->task == chief_task_) return std::move(line->text);
    FileFolderLine(*line);
  }
}

absl::StatusOr<std::vector<std::string>> StateStep::Ask(const std::string& request,
                                                        const std::string& first,
                                                        const std::string& last,
                                                        absl::Duration timeout,
                                                        const std::string& short_answer) {
  if (broken_) return absl::UnavailableError("the state step is broken");
  if (absl::Status sent = srun_->WriteStdin(absl::StrCat(request, "\n")); !sent.ok()) {
    broken_ = true;
    return sent;
  }
  const absl::Time deadline = absl::Now() + timeout;
  std::vector<std::string> lines;
  bool began = false;
  while (true) {
    absl::StatusOr<std::string> line = ChiefLine(deadline);
    if (!line.ok()) return line.status();
    if (!began) {
      if (!short_answer.empty() && *line == short_answer) return std::vector<std::string>{*line};
      if (*line != first) {
        broken_ = true;
        return absl::UnavailableError(
            absl::StrCat("the state step answered \"", *line, "\", not \"", first, "\""));
      }
      began = true;
      continue;
    }
    if (*line == last) return lines;
    if (*line == "@failed") return absl::UnavailableError("the state step's read failed");
    lines.push_back(*std::move(line));
  }
}

std::optional<StateSnapshot> StateStep::Snapshot() {
  absl::StatusOr<std::vector<std::string>> lines =
      Ask("@snapshot", absl::StrCat("@host ", chief_), "@end", kSnapshotWait, "@same");
  if (!lines.ok()) return std::nullopt;
  if (*lines == std::vector<std::string>{"@same"}) return chief_first_;
  std::string output = absl::StrCat("0: @host ", chief_, "\n");
  for (const std::string& line : *lines) absl::StrAppend(&output, "0: ", line, "\n");
  absl::StrAppend(&output, "0: @end\n");
  std::map<std::string, StateSnapshot> parsed = ParseEveryHostSnapshot(folders_, output);
  auto found = parsed.find(chief_);
  if (found == parsed.end()) return std::nullopt;
  return std::move(found->second);
}

absl::StatusOr<int> StateStep::Run(const std::string& command, std::string* output,
                                   absl::Duration timeout) {
  absl::StatusOr<std::vector<std::string>> lines =
      Ask(absl::Base64Escape(command), "@run", "@done", timeout);
  if (!lines.ok()) return lines.status();
  std::string base64;
  for (const std::string& line : *lines) absl::StrAppend(&base64, line);
  absl::StatusOr<std::pair<int, std::string>> answer = ParseRunAnswer(base64);
  if (!answer.ok()) {
    broken_ = true;
    return absl::UnavailableError(answer.status().message());
  }
  *output = std::move(answer->second);
  return answer->first;
}

}  // namespace fleetplan
