#include "tools/util/flags.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>

#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage_config.h"
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

// Abseil's usage flags (--help and friends) are handled by
// absl::ParseCommandLine itself and are not in the flag registry.
bool IsUsageFlag(absl::string_view name) {
  for (absl::string_view usage : {"help", "helpfull", "helpshort", "helppackage", "helpmatch",
                                  "version", "only_check_args"}) {
    if (name == usage) return true;
  }
  return false;
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
    if (absl::FindCommandLineFlag(name) != nullptr || IsUsageFlag(name)) continue;
    if (absl::StartsWith(name, "no")) {
      const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name.substr(2));
      if (flag != nullptr && flag->IsOfType<bool>()) continue;
    }
    // Named as documented (dashed), whichever spelling was typed.
    std::string shown = args[i];
    size_t start = name.data() - args[i].data();
    std::replace(shown.begin() + start, shown.begin() + start + name.size(), '_', '-');
    return absl::InvalidArgumentError(absl::StrCat("unknown flag ", shown, " (see --help)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ParseMainFlags(int argc, char** argv,
                                                        const char* main_file) {
  static std::string* help_file = new std::string;
  *help_file = main_file;
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, *help_file) || absl::EndsWith(*help_file, file);
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);

  std::vector<std::string> args = NormalizeFlagNames(argc, argv);
  if (absl::Status known = CheckFlagsDefined(args); !known.ok()) return known;
  std::vector<char*> raw;
  for (std::string& arg : args) raw.push_back(arg.data());
  std::vector<char*> positional = absl::ParseCommandLine(static_cast<int>(raw.size()), raw.data());
  return std::vector<std::string>(positional.begin(), positional.end());
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
