#include "tools/sync/sync_tree.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/util/path_policy.h"
#include "tools/protocol/agent_command.h"
#include "tools/util/shell_quote.h"
#include "tools/util/status_macros.h"
#include "tools/util/timed_cancel.h"

namespace fleetplan {
namespace {

absl::Status WithContext(const absl::Status& status, absl::string_view what) {
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
}

}  // namespace

absl::StatusOr<Manifest> ReadRecordedManifest(Connection& connection,
                                              const std::string& manifest_path) {
  absl::StatusOr<std::string> text = connection.ReadFile(manifest_path);
  if (absl::IsNotFound(text.status())) return Manifest();
  if (!text.ok()) {
    return WithContext(text.status(), absl::StrCat("reading ", manifest_path));
  }
  absl::StatusOr<Manifest> recorded = ParseManifest(*text);
  if (!recorded.ok()) return Manifest();
  return recorded;
}

namespace {

// Runs the verifier on the node; when the tree fails its check, or the
// check does not complete, forgets the recorded manifest so that the next
// sync sends everything and checks again.
absl::Status VerifyTree(Connection& connection, const std::string& remote_root,
                        const std::string& manifest_path, const SyncOptions& options) {
  std::string output;
  TimedCancel cancel(options.cancel, options.verify_timeout);
  absl::StatusOr<int> exit =
      options.verify_on_node
          ? options.verify_on_node(&output)
          : connection.Run({absl::StrCat(AgentCommandLine(options.verifier,
                                                          AgentVerifyTree{remote_root,
                                                                          manifest_path}),
                                         options.after_verify.empty() ? "" : " && ",
                                         options.after_verify)},
                           [&](absl::string_view chunk) { absl::StrAppend(&output, chunk); },
                           cancel.get());
  if (exit.ok() && *exit == 0 && !cancel.timed_out()) return absl::OkStatus();
  std::string message = absl::StrCat("checking ", remote_root, " after the sync: ");
  absl::StatusCode code = absl::StatusCode::kFailedPrecondition;
  absl::string_view said = absl::StripTrailingAsciiWhitespace(output);
  if (cancel.timed_out()) {
    code = absl::StatusCode::kDeadlineExceeded;
    absl::StrAppend(&message, "still running after ",
                    absl::FormatDuration(options.verify_timeout), ", stopped");
  } else if (!exit.ok()) {
    code = exit.status().code();
    absl::StrAppend(&message, exit.status().message());
  } else if (*exit == 1) {
    // The verifier's own answer: the files that differ.
    code = absl::StatusCode::kDataLoss;
    absl::StrAppend(&message, said);
  } else {
    absl::StrAppend(&message, options.verifier, " could not run on the node (status ", *exit,
                    "): ", said);
  }
  absl::Status forgotten = connection.WriteFile(manifest_path, "", 0600);
  if (!forgotten.ok()) absl::StrAppend(&message, " (and ", forgotten.message(), ")");
  return absl::Status(code, message);
}

// True when `inner` is `outer` or lies under it.
bool Contains(const std::string& outer, const std::string& inner) {
  if (outer == inner || outer == "/") return true;
  return absl::StartsWith(inner, absl::StrCat(outer, "/"));
}

}  // namespace

absl::StatusOr<SyncResult> SyncTree(Connection& connection, const Manifest& local,
                                    const std::string& remote_root,
                                    const std::string& manifest_path,
                                    const SyncOptions& options) {
  ManifestDiff diff;
  if (options.recorded != nullptr && !options.ignore_recorded) {
    diff = DiffManifests(*options.recorded, local);
  } else {
    FP_ASSIGN_OR_RETURN(diff, DiffWithRecorded(connection, local, manifest_path,
                                               options.ignore_recorded));
  }
  SyncResult result;
  NoteChanges(diff, &result);
  if (!diff.to_send.empty()) {
    std::vector<FileToSend> files;
    files.reserve(diff.to_send.size());
    uint64_t bytes = 0;
    for (const ManifestEntry& entry : diff.to_send) {
      files.push_back({entry.local_path, entry.path, entry.mode, entry.size});
      bytes += entry.size;
    }
    if (options.before_send) {
      FP_RETURN_IF_ERROR(options.before_send(bytes));
    }
    result.bytes_sent = bytes;
    absl::StatusOr<uint64_t> sent = connection.PutFilesCounting(files, remote_root);
    if (!sent.ok()) {
      return WithContext(sent.status(), absl::StrCat("sending files to ", remote_root));
    }
    result.bytes_from_here = *sent;
    result.files_sent = files.size();
  }
  if (!diff.to_remove.empty()) {
    absl::Status removed = connection.RemoveFiles(remote_root, diff.to_remove);
    if (!removed.ok()) {
      return WithContext(removed, absl::StrCat("removing files under ", remote_root));
    }
    result.files_removed = diff.to_remove.size();
  }
  if (result.changed() || options.ignore_recorded) {
    absl::Status written =
        connection.WriteFile(manifest_path, SerializeManifest(local), 0600);
    if (!written.ok()) {
      return WithContext(written, absl::StrCat("writing ", manifest_path));
    }
    if (!options.verifier.empty()) {
      FP_RETURN_IF_ERROR(VerifyTree(connection, remote_root, manifest_path, options));
    }
  }
  return result;
}

void NoteChanges(const ManifestDiff& diff, SyncResult* result) {
  for (const ManifestEntry& entry : diff.to_send) {
    result->changed_paths.push_back(entry.path);
    result->extras_changed |= entry.extra;
  }
  for (const std::string& path : diff.to_remove) {
    result->changed_paths.push_back(path);
    // Removed entries carry no kind; what lives under the state folder is
    // an extra.
    result->extras_changed |= absl::StartsWith(path, ".fleetplan/");
  }
}

absl::StatusOr<ManifestDiff> DiffWithRecorded(Connection& connection, const Manifest& local,
                                              const std::string& manifest_path,
                                              bool ignore_recorded) {
  Manifest recorded;
  if (!ignore_recorded) {
    FP_ASSIGN_OR_RETURN(recorded, ReadRecordedManifest(connection, manifest_path));
  }
  return DiffManifests(recorded, local);
}

absl::Status CheckSyncTarget(const std::string& source,
                             const std::string& destination) {
  std::string from = NormalizeAbsolutePath(source);
  std::string to = NormalizeAbsolutePath(destination);
  if (Contains(from, to) || Contains(to, from)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot sync ", source, " to ", destination,
        ": the workdir must not be the source or lie inside it (or hold it); "
        "choose a workdir outside the source tree"));
  }
  return absl::OkStatus();
}

}  // namespace fleetplan
