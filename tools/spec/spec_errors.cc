#include "tools/spec/spec_errors.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace fleetplan {
namespace {

bool IsControl(char c) {
  return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
}

// `text` with each control character written as \uXXXX, so a key or value
// quoted in a message cannot move the terminal's cursor or colour.
std::string EscapeControls(absl::string_view text) {
  std::string escaped;
  for (char c : text) {
    if (IsControl(c)) {
      absl::StrAppend(&escaped, absl::StrFormat("\\u%04x", static_cast<unsigned char>(c)));
    } else {
      escaped.push_back(c);
    }
  }
  return escaped;
}

// Line `line` (1-based) of `text`, without its line ending; "" when there is
// no such line.
absl::string_view LineOf(absl::string_view text, int line) {
  if (line <= 0) return "";
  int current = 1;
  for (absl::string_view candidate : absl::StrSplit(text, '\n')) {
    if (current++ != line) continue;
    if (!candidate.empty() && candidate.back() == '\r') candidate.remove_suffix(1);
    return candidate;
  }
  return "";
}

// The byte offset where each UTF-8 character of `text` starts (TOML++ counts
// columns in characters), and text.size() last.
std::vector<size_t> CharacterStarts(absl::string_view text) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) starts.push_back(i);
  }
  starts.push_back(text.size());
  return starts;
}

}  // namespace

SpecErrors::SpecErrors(absl::string_view text, std::string path)
    : text_(text), path_(std::move(path)) {}

void SpecErrors::Add(int line, int column, absl::string_view key,
                     absl::string_view message) {
  std::string error = absl::StrCat(path_, ":", line, ":", column, ": error: ");
  if (!key.empty()) absl::StrAppend(&error, EscapeControls(key), ": ");
  absl::StrAppend(&error, EscapeControls(message), QuotedLine(line, column));
  errors_.push_back(std::move(error));
}

absl::Status SpecErrors::ToStatus() const {
  if (errors_.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(errors_, "\n"));
}

std::string SpecErrors::QuotedLine(int line, int column) const {
  absl::string_view source = LineOf(text_, line);
  if (source.empty()) return "";
  std::vector<size_t> starts = CharacterStarts(source);
  const int characters = static_cast<int>(starts.size()) - 1;
  const int caret = std::clamp(column - 1, 0, characters);
  // A window of kSourceWidth characters with the caret in its middle, moved
  // inside the line where the middle would fall outside it.
  int first = 0, last = characters;
  if (characters > kSourceWidth) {
    first = std::clamp(caret - kSourceWidth / 2, 0, characters - kSourceWidth);
    last = first + kSourceWidth;
  }
  std::string shown(source.substr(starts[first], starts[last] - starts[first]));
  // Tabs would shift the caret and other control characters garble the
  // terminal: each shows as one character.
  for (char& c : shown) {
    if (IsControl(c)) c = c == '\t' ? ' ' : '?';
  }
  const std::string before = first > 0 ? "..." : "";
  const std::string after = last < characters ? "..." : "";
  return absl::StrCat("\n  ", before, shown, after, "\n  ",
                      std::string(before.size() + caret - first, ' '), "^");
}

}  // namespace fleetplan
