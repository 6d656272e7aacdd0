#include "tools/cli/flag_set.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tools/cli/help_text.h"
#include "tools/util/did_you_mean.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {
namespace {

bool IsHelp(absl::string_view arg) {
  return arg == "-h" || arg == "--help" || arg == "-help" || arg == "--helpfull";
}

absl::Status BadValue(absl::string_view name, absl::string_view value,
                      absl::string_view expected) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", name, ": '", value, "' is not ", expected));
}

absl::StatusOr<bool> ParseSwitch(absl::string_view name, absl::string_view value) {
  for (absl::string_view yes : {"true", "1", "yes", "on"}) {
    if (value == yes) return true;
  }
  for (absl::string_view no : {"false", "0", "no", "off"}) {
    if (value == no) return false;
  }
  return BadValue(name, value, "true or false");
}

}  // namespace

FlagSet::FlagSet(CommandDoc doc) : doc_(std::move(doc)) {}

void FlagSet::Group(absl::string_view heading) { group_ = std::string(heading); }

void FlagSet::Add(FlagDoc doc, std::function<absl::Status(absl::string_view)> set) {
  doc.group = group_;
  doc_.flags.push_back(doc);
  flags_.push_back({std::move(doc), std::move(set)});
}

void FlagSet::Switch(absl::string_view name, bool* target, absl::string_view help) {
  FlagDoc doc;
  doc.name = std::string(name);
  doc.help = std::string(help);
  Add(std::move(doc), [target, name = doc.name](absl::string_view value) {
    absl::StatusOr<bool> parsed = ParseSwitch(name, value);
    if (!parsed.ok()) return parsed.status();
    *target = *parsed;
    return absl::OkStatus();
  });
}

void FlagSet::Text(absl::string_view name, absl::string_view value_name, std::string* target,
                   absl::string_view help, ValueKind kind) {
  FlagDoc doc;
  doc.name = std::string(name);
  doc.value_name = std::string(value_name);
  doc.help = std::string(help);
  doc.kind = kind;
  doc.default_text = *target;
  Add(std::move(doc), [target](absl::string_view value) {
    *target = std::string(value);
    return absl::OkStatus();
  });
}

void FlagSet::Choice(absl::string_view name, std::string* target,
                     std::vector<std::string> choices, absl::string_view help) {
  FlagDoc doc;
  doc.name = std::string(name);
  doc.value_name = absl::StrJoin(choices, "|");
  doc.help = std::string(help);
  doc.kind = ValueKind::kChoice;
  doc.choices = choices;
  doc.default_text = *target;
  Add(std::move(doc), [target, choices, name = doc.name](absl::string_view value) {
    if (std::find(choices.begin(), choices.end(), value) == choices.end()) {
      return BadValue(name, value, absl::StrCat("one of ", absl::StrJoin(choices, ", ")));
    }
    *target = std::string(value);
    return absl::OkStatus();
  });
}

void FlagSet::Number(absl::string_view name, absl::string_view value_name, int* target,
                     absl::string_view help) {
  FlagDoc doc;
  doc.name = std::string(name);
  doc.value_name = std::string(value_name);
  doc.help = std::string(help);
  doc.kind = ValueKind::kNumber;
  doc.default_text = absl::StrCat(*target);
  Add(std::move(doc), [target, name = doc.name](absl::string_view value) {
    if (!absl::SimpleAtoi(value, target)) return BadValue(name, value, "a whole number");
    return absl::OkStatus();
  });
}

void FlagSet::Duration(absl::string_view name, absl::Duration* target,
                       absl::string_view help) {
  FlagDoc doc;
  doc.name = std::string(name);
  doc.value_name = "DURATION";
  doc.help = std::string(help);
  doc.kind = ValueKind::kDuration;
  doc.default_text = absl::FormatDuration(*target);
  Add(std::move(doc), [target, name = doc.name](absl::string_view value) {
    // A bare number is seconds, as a timeout is usually thought of.
    int seconds = 0;
    if (absl::SimpleAtoi(value, &seconds)) {
      *target = absl::Seconds(seconds);
      return absl::OkStatus();
    }
    if (!absl::ParseDuration(value, target)) {
      return BadValue(name, value, "a duration (such as 90s, 20m or 1h30m)");
    }
    return absl::OkStatus();
  });
}

void FlagSet::List(absl::string_view name, absl::string_view value_name,
                   std::vector<std::string>* target, absl::string_view help, ValueKind kind) {
  FlagDoc doc;
  doc.name = std::string(name);
  doc.value_name = std::string(value_name);
  doc.help = std::string(help);
  doc.kind = kind;
  doc.repeatable = true;
  Add(std::move(doc), [target](absl::string_view value) {
    for (absl::string_view item : absl::StrSplit(value, ',', absl::SkipEmpty())) {
      target->emplace_back(item);
    }
    return absl::OkStatus();
  });
}

const FlagSet::Flag* FlagSet::Find(absl::string_view name) const {
  for (const Flag& flag : flags_) {
    if (flag.doc.name == name) return &flag;
  }
  return nullptr;
}

absl::Status FlagSet::ParseFlag(absl::string_view arg, const std::vector<std::string>& args,
                                size_t* next) {
  absl::string_view body = arg.substr(absl::StartsWith(arg, "--") ? 2 : 1);
  size_t equals = body.find('=');
  std::string name(body.substr(0, equals));
  std::replace(name.begin(), name.end(), '_', '-');
  std::optional<std::string> value;
  if (equals != absl::string_view::npos) value = std::string(body.substr(equals + 1));

  const Flag* flag = Find(name);
  if (flag == nullptr && absl::StartsWith(name, "no") && !value.has_value()) {
    // --no-json, and Abseil's --nojson.
    absl::string_view positive = absl::StripPrefix(absl::StripPrefix(name, "no"), "-");
    const Flag* negated = Find(positive);
    if (negated != nullptr && negated->doc.kind == ValueKind::kSwitch) return negated->set("false");
  }
  if (flag == nullptr) {
    std::vector<std::string> names;
    for (const Flag& known : flags_) names.push_back(absl::StrCat("--", known.doc.name));
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown flag --", name, DidYouMean(absl::StrCat("--", name), names)));
  }
  if (flag->doc.kind == ValueKind::kSwitch) return flag->set(value.value_or("true"));
  if (!value.has_value()) {
    if (*next >= args.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " needs a value (", flag->doc.value_name, ")"));
    }
    value = args[(*next)++];
  }
  return flag->set(*value);
}

absl::Status FlagSet::ParseArgs(const std::vector<std::string>& args,
                                std::vector<std::string>* operands) {
  size_t i = 0;
  while (i < args.size()) {
    const std::string& arg = args[i++];
    if (arg == "--") {
      operands->insert(operands->end(), args.begin() + i, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      operands->push_back(arg);
      continue;
    }
    if (absl::Status parsed = ParseFlag(arg, args, &i); !parsed.ok()) return parsed;
  }
  if (operands->size() < doc_.min_operands || operands->size() > doc_.max_operands) {
    return absl::InvalidArgumentError(doc_.operands_expected);
  }
  return absl::OkStatus();
}

std::optional<int> FlagSet::Parse(const CommandLine& line, std::vector<std::string>* operands) {
  doc_.name = line.name;
  doc_.summary = line.summary;
  if (line.describe != nullptr) {
    *line.describe = doc_;
    return kExitOk;
  }
  for (const std::string& arg : line.args) {
    if (arg == "--") break;
    if (IsHelp(arg)) {
      std::fputs(RenderHelpText(doc_).c_str(), stdout);
      return kExitOk;
    }
  }
  if (absl::Status parsed = ParseArgs(line.args, operands); !parsed.ok()) {
    std::fprintf(stderr, "fleetplan %s: %s (see fleetplan %s --help)\n", line.name.c_str(),
                 std::string(parsed.message()).c_str(), line.name.c_str());
    return kExitBadInput;
  }
  return std::nullopt;
}

}  // namespace fleetplan
