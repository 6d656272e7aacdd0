#include "plugins/slurm/state_snapshot.h"

#include <utility>

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tools/util/shell_quote.h"

namespace fleetplan {
namespace {

constexpr absl::string_view kNodes = "/.fleetplan/nodes/";

}  // namespace

std::string StateFolderOf(absl::string_view path) {
  size_t at = path.find(kNodes);
  if (at == absl::string_view::npos) return "";
  size_t name = at + kNodes.size();
  size_t end = path.find('/', name);
  if (end == absl::string_view::npos || end == name) return "";
  return std::string(path.substr(0, end));
}

bool SnapshotCovers(absl::string_view folder, absl::string_view path) {
  if (!absl::StartsWith(path, folder) || path.size() <= folder.size() + 1 ||
      path[folder.size()] != '/') {
    return false;
  }
  absl::string_view rest = path.substr(folder.size() + 1);
  return !absl::StartsWith(rest, "logs/") || rest == "logs/job.json";
}

std::string SnapshotCommand(const std::string& folder) {
  // Three processes, not one per file: sizes from one stat, then every
  // file from one cat. A file replaced between the two (job.json, by a
  // running agent) makes sizes and bytes disagree, and the parse refuses
  // the snapshot. fleetplan's own file names hold no blanks.
  return absl::StrCat("[ -d ", ShellQuote(folder), " ] || exit 0\n",
                      "cd ", ShellQuote(folder), " || exit 1\n",
                      "f=$(find . -path ./logs -prune -o -type f -print; "
                      "[ -f logs/job.json ] && echo ./logs/job.json)\n",
                      "[ -n \"$f\" ] || exit 0\n",
                      "stat -c '%s %n' $f && echo @ && cat $f\n");
}

std::string MarkFolderCommand(const std::string& folder) {
  // `read` is the shell's own: a folder marked already costs no program.
  std::string mark = ShellQuote(absl::StrCat(folder, "/", kAllocationMarkName));
  return absl::StrCat("if [ -n \"$SLURM_JOB_ID\" ]; then\n", "  m=", mark, "; j=\n",
                      "  read -r j 2>/dev/null <\"$m\"\n",
                      "  [ \"$j\" = \"$SLURM_JOB_ID\" ] || (umask 077; mkdir -p ",
                      ShellQuote(folder), " && printf '%s\\n' \"$SLURM_JOB_ID\" >\"$m.$$\" && ",
                      "mv -f \"$m.$$\" \"$m\")\n", "fi\n");
}

std::string EveryHostSnapshotCommand(const std::map<std::string, std::string>& folders) {
  std::string command = "case \"$SLURMD_NODENAME\" in\n";
  for (const auto& [host, folder] : folders) {
    absl::StrAppend(&command, ShellQuote(host), ")\n", MarkFolderCommand(folder),
                    "  echo \"@host $SLURMD_NODENAME\"\n  (", SnapshotCommand(folder),
                    ") | base64 -w 512 && echo @end ;;\n");
  }
  absl::StrAppend(&command, "esac\n");
  return command;
}

std::map<std::string, StateSnapshot> ParseEveryHostSnapshot(
    const std::map<std::string, std::string>& folders, absl::string_view output) {
  // Per task: its host, its base64 so far, and whether "@end" came.
  struct Task {
    std::string host;
    std::string base64;
    bool ended = false;
  };
  std::map<std::string, Task> tasks;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    size_t colon = line.find(": ");
    if (colon == absl::string_view::npos) continue;
    Task& task = tasks[std::string(absl::StripAsciiWhitespace(line.substr(0, colon)))];
    absl::string_view payload = line.substr(colon + 2);
    if (absl::ConsumePrefix(&payload, "@host ")) {
      task.host = std::string(payload);
    } else if (payload == "@end") {
      task.ended = true;
    } else {
      absl::StrAppend(&task.base64, payload);
    }
  }
  std::map<std::string, StateSnapshot> snapshots;
  for (const auto& [label, task] : tasks) {
    auto folder = folders.find(task.host);
    std::string decoded;
    if (!task.ended || folder == folders.end() || !absl::Base64Unescape(task.base64, &decoded)) {
      continue;
    }
    absl::StatusOr<StateSnapshot> parsed = StateSnapshot::Parse(folder->second, decoded);
    if (parsed.ok()) snapshots[folder->first] = *std::move(parsed);
  }
  return snapshots;
}

absl::StatusOr<StateSnapshot> StateSnapshot::Parse(const std::string& folder,
                                                   absl::string_view output) {
  StateSnapshot snapshot;
  snapshot.folder_ = folder;
  if (output.empty()) return snapshot;  // no folder yet
  size_t body = output.find("\n@\n");
  if (absl::StartsWith(output, "@\n")) body = 0;
  if (body == absl::string_view::npos) return absl::InvalidArgumentError("not a state snapshot");
  absl::string_view header = output.substr(0, body);
  absl::string_view bytes = output.substr(body == 0 ? 2 : body + 3);
  for (absl::string_view line : absl::StrSplit(header, '\n', absl::SkipEmpty())) {
    size_t space = line.find(' ');
    uint64_t size = 0;
    if (space == absl::string_view::npos || !absl::SimpleAtoi(line.substr(0, space), &size) ||
        bytes.size() < size) {
      return absl::InvalidArgumentError("not a state snapshot");
    }
    std::string path(line.substr(space + 1));
    if (absl::StartsWith(path, "./")) path = absl::StrCat(folder, path.substr(1));
    snapshot.files_[path] = std::string(bytes.substr(0, size));
    bytes.remove_prefix(size);
  }
  if (!bytes.empty()) return absl::InvalidArgumentError("state snapshot: sizes and bytes differ");
  return snapshot;
}

StateSnapshot StateSnapshot::Of(std::string folder, std::map<std::string, std::string> files) {
  StateSnapshot snapshot;
  snapshot.folder_ = std::move(folder);
  snapshot.files_ = std::move(files);
  return snapshot;
}

bool StateSnapshot::Holds(const std::string& path, absl::string_view content) const {
  if (absl::EndsWith(path, "/logs/job.json")) return false;
  auto it = files_.find(path);
  return it != files_.end() && it->second == content;
}

void StateSnapshot::Wrote(const std::string& path, absl::string_view content) {
  files_[path] = std::string(content);
}

std::optional<std::string> StateSnapshot::Take(const std::string& path, bool* answered) {
  const bool agents = absl::EndsWith(path, "/logs/job.json");
  *answered = !agents || taken_.insert(path).second;
  if (!*answered) return std::nullopt;
  auto it = files_.find(path);
  if (it == files_.end()) return std::nullopt;
  if (!agents) return it->second;
  std::string content = std::move(it->second);
  files_.erase(it);
  return content;
}

}  // namespace fleetplan
