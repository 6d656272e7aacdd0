#include "tools/agent/program_check.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tools/process/exec_args.h"
#include "tools/process/subprocess.h"
#include "tools/util/path_policy.h"

namespace fleetplan {
namespace {

constexpr absl::Duration kVersionTimeout = absl::Seconds(20);

bool LooksLikePython(const std::string& file) {
  return absl::StartsWith(Basename(file), "python");
}

}  // namespace

std::optional<std::string> ParsePythonVersion(const std::string& output) {
  std::vector<absl::string_view> words =
      absl::StrSplit(absl::StripAsciiWhitespace(output), ' ', absl::SkipWhitespace());
  if (words.size() != 2 || words[0] != "Python") return std::nullopt;
  std::vector<absl::string_view> parts = absl::StrSplit(words[1], '.');
  int number;
  if (parts.size() < 2 || !absl::SimpleAtoi(parts[0], &number) ||
      !absl::SimpleAtoi(parts[1], &number)) {
    return std::nullopt;
  }
  return std::string(words[1]);
}

ProgramFindings CheckProgram(const std::string& program, const std::string& path) {
  ProgramFindings findings;
  absl::StatusOr<std::string> found = FindProgram(program, path);
  if (!found.ok()) {
    std::string where = program.find('/') == std::string::npos
                            ? absl::StrCat(program, " is not on this node's PATH (", path, ")")
                            : absl::StrCat(program, " does not exist or is not executable");
    findings.check = {std::string(kCheckProgram), CheckStatus::kFail,
                      absl::StrCat(where, "; expected the job's program; fix: install it here, "
                                          "activate the environment that has it ([defaults] "
                                          "python), or give its path")};
    return findings;
  }
  findings.resolved = *found;
  findings.check = {std::string(kCheckProgram), CheckStatus::kOk,
                    *found == program ? *found : absl::StrCat(program, " is ", *found)};
  if (!LooksLikePython(*found)) return findings;
  SubprocessOptions run;
  run.argv = {*found, "--version"};
  absl::StatusOr<Completed> done = RunToCompletion(run, kVersionTimeout);
  std::string why;
  if (!done.ok()) {
    why = std::string(done.status().message());
  } else if (done->timed_out) {
    why = absl::StrCat("it did not answer within ", absl::FormatDuration(kVersionTimeout));
  } else if (std::optional<std::string> version = ParsePythonVersion(done->output);
             done->status == 0 && version.has_value()) {
    findings.fact = {std::string(kFactInterpreter), absl::StrCat(*version, " ", *found)};
    return findings;
  } else {
    why = absl::StrCat("it exited with status ", done->status, " saying '",
                       absl::StripAsciiWhitespace(done->output), "'");
  }
  findings.interpreter_skipped =
      CheckResult{std::string(kCheckInterpreter), CheckStatus::kSkip,
                  absl::StrCat("cannot tell the version of ", *found, " (", *found,
                               " --version: ", why, "); the same Python on every node not "
                               "checked")};
  return findings;
}

}  // namespace fleetplan
