#include "tools/cli/secret_sources.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tools/process/files.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

std::string Home() {
  const char* home = getenv("HOME");
  return home != nullptr ? home : "";
}

absl::Status Missing(const SecretSpec& secret, absl::string_view why) {
  return absl::FailedPreconditionError(
      absl::StrCat("secret ", secret.name, " (", secret.location.file, ":", secret.location.line,
                   ":", secret.location.column, "): ", why));
}

// A command's stdout, as $(...) gives it; its stderr stays on ours so the
// user sees why a password manager refused.
absl::StatusOr<std::string> CommandOutput(const SecretSpec& secret) {
  fflush(nullptr);
  FILE* pipe = popen(secret.from.c_str(), "re");
  if (pipe == nullptr) return Missing(secret, absl::StrCat("cannot run `", secret.from, "`"));
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  int status = pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    int code = status == -1 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status)
                                                     : 128 + WTERMSIG(status);
    return Missing(secret, absl::StrCat("command `", secret.from, "` failed (exit status ",
                                        code, ")"));
  }
  return output;
}

absl::StatusOr<std::string> ReadSecret(const SecretSpec& secret) {
  switch (secret.source) {
    case SecretSpec::Source::kEnv: {
      const char* value = getenv(secret.from.c_str());
      if (value == nullptr) {
        return Missing(secret, absl::StrCat("environment variable ", secret.from, " is not set"));
      }
      return std::string(value);
    }
    case SecretSpec::Source::kFile: {
      std::string path = secret.from;
      if (absl::StartsWith(path, "~/")) path = absl::StrCat(Home(), path.substr(1));
      absl::StatusOr<std::string> content = ReadFileToString(path);
      if (!content.ok()) return Missing(secret, content.status().message());
      return content;
    }
    case SecretSpec::Source::kCommand:
      return CommandOutput(secret);
  }
  return absl::InternalError("unknown secret source");
}

}  // namespace

absl::StatusOr<EnvList> ResolveSecrets(const std::vector<SecretSpec>& secrets) {
  EnvList values;
  for (const SecretSpec& secret : secrets) {
    FP_ASSIGN_OR_RETURN(std::string value, ReadSecret(secret));
    if (secret.source != SecretSpec::Source::kEnv && absl::EndsWith(value, "\n")) {
      value.pop_back();
    }
    values.emplace_back(secret.name, std::move(value));
  }
  return values;
}

std::string DigestKeyPath() {
  const char* config = getenv("XDG_CONFIG_HOME");
  std::string base = config != nullptr && config[0] == '/' ? config : Home() + "/.config";
  return absl::StrCat(base, "/fleetplan/secret-digest.key");
}

absl::StatusOr<JobKey> LoadOrMakeDigestKey(const std::string& path) {
  absl::StatusOr<JobKey> key = ReadJobKeyFile(path);
  if (!absl::IsNotFound(key.status())) return key;
  FP_ASSIGN_OR_RETURN(JobKey made, MakeJobKey());
  // WriteFileAtomic creates it 0600 from the start and renames it into
  // place: no one ever sees the key file readable, nor half written.
  FP_RETURN_IF_ERROR(WriteFileAtomic(path, JobKeyFileText(made), 0600));
  return made;
}

absl::StatusOr<std::string> SecretsDigest(const JobKey& key, const EnvList& values) {
  if (values.empty()) return std::string();
  std::string framed;
  for (const auto& [name, value] : values) {
    absl::StrAppend(&framed, name.size(), ":", name, value.size(), ":", value);
  }
  return KeyedDigestHex(key.view(), framed);
}

}  // namespace fleetplan
