#include "tools/cli/flags.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>

#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace fleetplan {
namespace {

// The name part of "--name=value", "-name" or "--noname"; "" for a
// positional argument.
absl::string_view FlagName(absl::string_view arg) {
  if (arg.size() < 2 || arg[0] != '-') return "";
  arg.remove_prefix(arg[1] == '-' ? 2 : 1);
  return arg.substr(0, arg.find('='));
}

}  // namespace

std::vector<std::string> NormalizeFlagNames(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    absl::string_view name = FlagName(args[i]);
    if (name.empty()) continue;
    size_t start = name.data() - args[i].data();
    std::replace(args[i].begin() + start, args[i].begin() + start + name.size(), '-', '_');
  }
  return args;
}

absl::Status CheckFlagsDefined(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    absl::string_view name = FlagName(args[i]);
    if (name.empty()) continue;
    if (absl::FindCommandLineFlag(name) != nullptr) continue;
    if (absl::StartsWith(name, "no")) {
      const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name.substr(2));
      if (flag != nullptr && flag->IsOfType<bool>()) continue;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("unknown flag ", args[i], " (see --help)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> UseColor(const std::string& flag_value, int fd) {
  if (flag_value == "always") return true;
  if (flag_value == "never") return false;
  if (flag_value == "auto") {
    const char* term = getenv("TERM");
    return isatty(fd) == 1 && !(term != nullptr && absl::string_view(term) == "dumb");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--color must be auto, always or never, not '", flag_value, "'"));
}

}  // namespace fleetplan
