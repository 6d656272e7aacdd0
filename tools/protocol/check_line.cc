#include "tools/protocol/check_line.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fleetplan {
namespace {

std::optional<CheckStatus> ParseStatus(absl::string_view name) {
  if (name == "ok") return CheckStatus::kOk;
  if (name == "fail") return CheckStatus::kFail;
  if (name == "skip") return CheckStatus::kSkip;
  return std::nullopt;
}

// Splits off the first space-separated word of `*rest`.
absl::string_view NextWord(absl::string_view* rest) {
  *rest = absl::StripLeadingAsciiWhitespace(*rest);
  size_t space = rest->find(' ');
  absl::string_view word = rest->substr(0, space);
  rest->remove_prefix(space == absl::string_view::npos ? rest->size() : space + 1);
  return word;
}

}  // namespace

absl::string_view CheckStatusName(CheckStatus status) {
  switch (status) {
    case CheckStatus::kOk:
      return "ok";
    case CheckStatus::kFail:
      return "fail";
    case CheckStatus::kSkip:
      return "skip";
  }
  return "unknown";
}

std::string FormatCheckLine(const CheckResult& result) {
  return absl::StrCat(kCheckLinePrefix, " ", result.check, " ",
                      CheckStatusName(result.status), " ",
                      absl::StrReplaceAll(result.message, {{"\r", " "}, {"\n", " "}}));
}

std::string FormatFactLine(absl::string_view name, absl::string_view value) {
  return absl::StrCat(kFactLinePrefix, " ", name, " ",
                      absl::StrReplaceAll(value, {{"\r", " "}, {"\n", " "}}));
}

CheckOutput ParseCheckOutput(absl::string_view output) {
  CheckOutput parsed;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    line = absl::StripTrailingAsciiWhitespace(line);
    absl::string_view rest = line;
    absl::string_view prefix = NextWord(&rest);
    if (prefix == kCheckLinePrefix) {
      absl::string_view check = NextWord(&rest);
      std::optional<CheckStatus> status = ParseStatus(NextWord(&rest));
      if (check.empty() || !status.has_value()) continue;
      parsed.checks.push_back({std::string(check), *status, std::string(rest)});
    } else if (prefix == kFactLinePrefix) {
      absl::string_view name = NextWord(&rest);
      if (!name.empty()) parsed.facts.emplace_back(name, rest);
    }
  }
  return parsed;
}

}  // namespace fleetplan
