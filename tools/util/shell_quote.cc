#include "tools/util/shell_quote.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace fleetplan {
namespace {

bool IsSafeBareByte(char c) {
  if (absl::ascii_isalnum(static_cast<unsigned char>(c))) return true;
  switch (c) {
    case '/': case '_': case '.': case '=': case ':': case ',':
    case '+': case '@': case '%': case '-':
      return true;
    default:
      return false;
  }
}

bool IsNameStart(char c) {
  return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_';
}

bool IsNameByte(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Length of the variable reference at the start of `text` (which begins with
// '$'), with its name in `name`; 0 when it is not `$NAME` or `${NAME}`.
size_t MatchVariable(absl::string_view text, absl::string_view* name) {
  if (text.size() < 2) return 0;
  if (text[1] == '{') {
    size_t end = 2;
    while (end < text.size() && IsNameByte(text[end])) ++end;
    if (end == 2 || end >= text.size() || text[end] != '}' ||
        !IsNameStart(text[2])) {
      return 0;
    }
    *name = text.substr(2, end - 2);
    return end + 1;
  }
  if (!IsNameStart(text[1])) return 0;
  size_t end = 2;
  while (end < text.size() && IsNameByte(text[end])) ++end;
  *name = text.substr(1, end - 1);
  return end;
}

}  // namespace

std::string ShellQuote(absl::string_view value) {
  bool bare = !value.empty();
  for (char c : value) bare = bare && IsSafeBareByte(c);
  if (bare) return std::string(value);
  std::string word = "'";
  for (char c : value) {
    if (c == '\'') {
      word += "'\\''";
    } else {
      word += c;
    }
  }
  word += '\'';
  return word;
}

std::string ShellWordExpandingVars(absl::string_view value) {
  std::string word;
  size_t literal_start = 0;
  auto flush_literal = [&](size_t end) {
    if (end > literal_start) {
      word += ShellQuote(value.substr(literal_start, end - literal_start));
    }
  };
  for (size_t i = 0; i < value.size();) {
    absl::string_view name;
    size_t length = value[i] == '$' ? MatchVariable(value.substr(i), &name) : 0;
    if (length == 0) {
      ++i;
      continue;
    }
    flush_literal(i);
    // Double quotes keep the expanded value one word and unsplit.
    word += "\"${";
    word.append(name.data(), name.size());
    word += "}\"";
    i += length;
    literal_start = i;
  }
  flush_literal(value.size());
  if (word.empty()) return "''";
  return word;
}

absl::StatusOr<std::vector<std::string>> SplitShellWords(absl::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
    } else if (c == '\'') {
      size_t end = line.find('\'', i + 1);
      if (end == absl::string_view::npos) {
        return absl::InvalidArgumentError(absl::StrCat("an unterminated ' at byte ", i));
      }
      word.append(line.data() + i + 1, end - i - 1);
      i = end;
    } else if (c == '"') {
      size_t j = i + 1;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\' && j + 1 < line.size() &&
            absl::string_view("\\\"$`").find(line[j + 1]) != absl::string_view::npos) {
          ++j;
        }
        word += line[j];
      }
      if (j >= line.size()) {
        return absl::InvalidArgumentError(absl::StrCat("an unterminated \" at byte ", i));
      }
      i = j;
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

}  // namespace fleetplan
