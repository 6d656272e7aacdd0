#include "tools/protocol/option_list.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tools/util/did_you_mean.h"

namespace fleetplan {
namespace {

absl::Status BadValue(absl::string_view name, absl::string_view value, absl::string_view want) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", name, "=", value, ": ", want, " expected"));
}

const BoundOption* Find(const OptionList& options, absl::string_view name) {
  for (const BoundOption& option : options.options()) {
    if (option.name == name) return &option;
  }
  return nullptr;
}

absl::Status Unknown(const OptionList& options, absl::string_view name) {
  std::vector<std::string> names;
  for (const BoundOption& option : options.options()) names.push_back(option.name);
  if (names.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": takes no options"));
  }
  std::string near = ClosestMatch(name, names);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown option --", name,
                   near.empty() ? "" : absl::StrCat(" (did you mean --", near, "?)"),
                   "; its options: --", absl::StrJoin(names, ", --")));
}

// Sets the option `arg` (`--name` or `--name=value`) names.
absl::Status SetOne(const OptionList& options, absl::string_view arg,
                    std::set<std::string>* seen) {
  absl::string_view body = arg.substr(2);
  size_t equals = body.find('=');
  absl::string_view name = body.substr(0, equals);
  const BoundOption* option = Find(options, name);
  if (option == nullptr) return Unknown(options, name);
  if (!seen->insert(std::string(name)).second) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, " is given twice"));
  }
  if (equals == absl::string_view::npos) {
    if (option->is_switch) return option->set("true");
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " needs a value: --", name, "=", option->value_name));
  }
  return option->set(body.substr(equals + 1));
}

}  // namespace

void OptionList::Text(absl::string_view name, absl::string_view value_name, std::string* field,
                      absl::string_view help) {
  Custom(name, value_name, help, [field] { return *field; },
         [field](absl::string_view value) {
           *field = std::string(value);
           return absl::OkStatus();
         });
}

void OptionList::Number(absl::string_view name, absl::string_view value_name, int* field,
                        absl::string_view help) {
  std::string flag(name);
  Custom(name, value_name, help, [field] { return absl::StrCat(*field); },
         [field, flag](absl::string_view value) {
           if (!absl::SimpleAtoi(value, field)) return BadValue(flag, value, "a whole number");
           return absl::OkStatus();
         });
}

void OptionList::Switch(absl::string_view name, bool* field, absl::string_view help) {
  std::string flag(name);
  Custom(name, "", help, [field] { return std::string(*field ? "true" : "false"); },
         [field, flag](absl::string_view value) {
           if (value != "true" && value != "false") return BadValue(flag, value, "true or false");
           *field = value == "true";
           return absl::OkStatus();
         });
  options_.back().is_switch = true;
}

void OptionList::Duration(absl::string_view name, absl::Duration* field, absl::string_view help) {
  std::string flag(name);
  Custom(name, "DURATION", help, [field] { return absl::FormatDuration(*field); },
         [field, flag](absl::string_view value) {
           if (!absl::ParseDuration(value, field)) {
             return BadValue(flag, value, "a duration such as 30s or 10m");
           }
           return absl::OkStatus();
         });
}

void OptionList::List(absl::string_view name, absl::string_view value_name,
                      std::vector<std::string>* field, absl::string_view help) {
  Custom(name, value_name, help, [field] { return absl::StrJoin(*field, ","); },
         [field](absl::string_view value) {
           *field = absl::StrSplit(value, ',', absl::SkipEmpty());
           return absl::OkStatus();
         });
}

void OptionList::Custom(absl::string_view name, absl::string_view value_name,
                        absl::string_view help, std::function<std::string()> get,
                        std::function<absl::Status(absl::string_view)> set) {
  options_.push_back({std::string(name), std::string(value_name), std::string(help), false,
                      std::move(get), std::move(set)});
}

void OptionList::Operands(absl::string_view value_name, std::vector<std::string>* field) {
  operands_ = field;
  operands_name_ = std::string(value_name);
}

std::vector<std::string> WriteOptionList(const OptionList& values, const OptionList& defaults) {
  std::vector<std::string> args;
  for (size_t i = 0; i < values.options().size(); ++i) {
    const BoundOption& option = values.options()[i];
    std::string value = option.get();
    if (value == defaults.options()[i].get()) continue;
    if (option.is_switch && value == "true") {
      args.push_back(absl::StrCat("--", option.name));
    } else {
      args.push_back(absl::StrCat("--", option.name, "=", value));
    }
  }
  if (values.operands() != nullptr && !values.operands()->empty()) {
    args.push_back("--");
    args.insert(args.end(), values.operands()->begin(), values.operands()->end());
  }
  return args;
}

absl::Status ParseOptionList(const std::vector<std::string>& args, const OptionList& options) {
  std::set<std::string> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--" || !absl::StartsWith(arg, "--")) {
      size_t first = arg == "--" ? i + 1 : i;
      if (options.operands() == nullptr) {
        if (first >= args.size()) return absl::OkStatus();
        return absl::InvalidArgumentError(
            absl::StrCat("takes no operands, not '", args[first], "'"));
      }
      if (arg != "--") {
        return absl::InvalidArgumentError(
            absl::StrCat("'", arg, "': options first, then -- and ", options.operands_name()));
      }
      options.operands()->assign(args.begin() + first, args.end());
      return absl::OkStatus();
    }
    if (absl::Status set = SetOne(options, arg, &seen); !set.ok()) return set;
  }
  return absl::OkStatus();
}

absl::Status NamingCommand(absl::string_view name, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(name, ": ", status.message()));
}

std::string OptionListUsage(const OptionList& options) {
  std::string usage;
  for (const BoundOption& option : options.options()) {
    std::string spelled = option.is_switch
                              ? absl::StrCat("--", option.name)
                              : absl::StrCat("--", option.name, "=", option.value_name);
    std::string default_value = option.get();
    if (option.is_switch && default_value == "true") absl::StrAppend(&spelled, " (on)");
    if (!option.is_switch && !default_value.empty() && default_value != "0" &&
        default_value != "-1") {
      absl::StrAppend(&spelled, " (", default_value, ")");
    }
    absl::StrAppend(&usage, "      ", spelled,
                    std::string(spelled.size() < 30 ? 30 - spelled.size() : 1, ' '), option.help,
                    "\n");
  }
  if (options.operands() != nullptr) {
    absl::StrAppend(&usage, "      -- ", options.operands_name(), "\n");
  }
  return usage;
}

}  // namespace fleetplan
