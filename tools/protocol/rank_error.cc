#include "tools/protocol/rank_error.h"

#include <string.h>

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tools/protocol/json_fields.h"
#include "tools/util/human_units.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

// The length of the valid UTF-8 sequence at text[i], or 0.
size_t Utf8SequenceAt(absl::string_view text, size_t i) {
  unsigned char c = text[i];
  size_t length = 0;
  unsigned char min_second = 0x80, max_second = 0xBF;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    length = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    length = 3;
    if (c == 0xE0) min_second = 0xA0;  // overlong
    if (c == 0xED) max_second = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    length = 4;
    if (c == 0xF0) min_second = 0x90;  // overlong
    if (c == 0xF4) max_second = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    unsigned char next = text[i + k];
    unsigned char low = k == 1 ? min_second : 0x80, high = k == 1 ? max_second : 0xBF;
    if (next < low || next > high) return 0;
  }
  return length;
}

// The innermost `  File "PATH", line N, in FUNCTION` of a Python traceback.
void ReadInnermostFrame(absl::string_view stack, RankError* error) {
  constexpr absl::string_view kFile = "\n  File \"";
  size_t at = stack.rfind(kFile);
  if (at == absl::string_view::npos) return;
  absl::string_view frame = stack.substr(at + kFile.size());
  frame = frame.substr(0, frame.find('\n'));
  constexpr absl::string_view kLine = "\", line ";
  size_t quote = frame.rfind(kLine);
  if (quote == absl::string_view::npos) return;
  absl::string_view rest = frame.substr(quote + kLine.size());
  constexpr absl::string_view kIn = ", in ";
  size_t in = rest.find(kIn);
  int line = 0;
  if (!absl::SimpleAtoi(rest.substr(0, in), &line) || line < 0) return;
  error->file = BoundedUtf8(frame.substr(0, quote), kMaxErrorNameBytes);
  error->line = line;
  if (in != absl::string_view::npos) {
    error->function = BoundedUtf8(rest.substr(in + kIn.size()), kMaxErrorNameBytes);
  }
}

// "ValueError: bad shard 7" → type and message, as error_handler.py joins
// them (f"{type(e).__name__}: {e}").
void SplitTypeAndMessage(absl::string_view text, RankError* error) {
  size_t colon = text.find(": ");
  absl::string_view type = colon == absl::string_view::npos ? "" : text.substr(0, colon);
  bool is_name = !type.empty() && type.size() <= kMaxErrorNameBytes;
  for (char c : type) is_name &= absl::ascii_isalnum(c) || c == '_' || c == '.';
  if (is_name) {
    error->type = std::string(type);
    text.remove_prefix(colon + 2);
  }
  error->message = BoundedUtf8(absl::StripAsciiWhitespace(text), kMaxErrorMessageBytes);
}

absl::Status GetBounded(const JsonFields& fields, absl::string_view document, const char* key,
                        size_t max_bytes, std::string* out) {
  FP_RETURN_IF_ERROR(fields.Get(key, out));
  if (out->size() > max_bytes) {
    return InvalidField(document, key, absl::StrCat("is longer than ", max_bytes, " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace

bool RankDeath::operator==(const RankDeath& other) const {
  return signal == other.signal && core_dumped == other.core_dumped &&
         oom_killed == other.oom_killed && peak_rss_bytes == other.peak_rss_bytes &&
         memory_limit_bytes == other.memory_limit_bytes;
}

bool RankError::operator==(const RankError& other) const {
  return type == other.type && message == other.message && file == other.file &&
         line == other.line && function == other.function && log_tail == other.log_tail &&
         death == other.death;
}

std::string DescribeRankDeath(const RankDeath& death) {
  if (death.signal == 0) return "";
  const char* name = sigabbrev_np(death.signal);  // "KILL"
  std::string text = name != nullptr
                         ? absl::StrCat("killed by SIG", name, " (signal ", death.signal, ")")
                         : absl::StrCat("killed by signal ", death.signal);
  if (death.core_dumped) absl::StrAppend(&text, ", core dumped");
  if (death.oom_killed) {
    absl::StrAppend(&text, "; the kernel's OOM killer ended it");
    if (death.peak_rss_bytes > 0) {
      absl::StrAppend(&text, ": peak RSS ", FormatBytes(death.peak_rss_bytes));
      if (death.memory_limit_bytes > 0) {
        absl::StrAppend(&text, " of a ", FormatBytes(death.memory_limit_bytes), " limit");
      }
    }
  }
  return text;
}

std::string BoundedUtf8(absl::string_view text, size_t max_bytes, bool keep_end) {
  if (text.size() > max_bytes) {
    text = keep_end ? text.substr(text.size() - max_bytes) : text.substr(0, max_bytes);
  }
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t length = Utf8SequenceAt(text, i);
    if (length == 0) {
      out.push_back('?');
      ++i;
    } else {
      out.append(text.data() + i, length);
      i += length;
    }
  }
  return out;
}

absl::StatusOr<RankError> ParseErrorFile(absl::string_view contents) {
  if (contents.size() > kMaxErrorFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("error file: larger than ", kMaxErrorFileBytes, " bytes"));
  }
  nlohmann::json json = nlohmann::json::parse(contents.begin(), contents.end(), nullptr,
                                              /*allow_exceptions=*/false);
  if (!json.is_object()) return absl::InvalidArgumentError("error file: not a JSON object");
  auto outer = json.find("message");
  if (outer == json.end()) return absl::InvalidArgumentError("error file: no \"message\"");
  RankError error;
  if (outer->is_string()) {
    // The newer format: the message alone.
    SplitTypeAndMessage(outer->get_ref<const std::string&>(), &error);
    return error;
  }
  if (!outer->is_object()) return absl::InvalidArgumentError("error file: bad \"message\"");
  auto text = outer->find("message");
  if (text == outer->end() || !text->is_string()) {
    return absl::InvalidArgumentError("error file: no \"message\".\"message\" text");
  }
  SplitTypeAndMessage(text->get_ref<const std::string&>(), &error);
  auto extra = outer->find("extraInfo");
  if (extra != outer->end() && extra->is_object()) {
    auto stack = extra->find("py_callstack");
    if (stack != extra->end() && stack->is_string()) {
      ReadInnermostFrame(stack->get_ref<const std::string&>(), &error);
    }
  }
  return error;
}

RankError FromLogTail(absl::string_view output) {
  // The last lines, not counting the newline that ends the output.
  while (!output.empty() && output.back() == '\n') output.remove_suffix(1);
  size_t start = output.size();
  for (int lines = 0; lines < kLogTailLines; ++lines) {
    size_t newline = start == 0 ? absl::string_view::npos : output.rfind('\n', start - 1);
    if (newline == absl::string_view::npos) {
      start = 0;
      break;
    }
    start = newline;
  }
  absl::string_view tail = output.substr(start);
  if (!tail.empty() && tail.front() == '\n') tail.remove_prefix(1);
  RankError error;
  error.log_tail = BoundedUtf8(tail, kMaxLogTailBytes, /*keep_end=*/true);
  return error;
}

std::string DescribeRankError(const RankError& error) {
  if (error.type.empty() && error.message.empty()) return "";
  std::string text = error.type.empty() ? error.message
                     : error.message.empty()
                         ? error.type
                         : absl::StrCat(error.type, ": ", error.message);
  if (!error.file.empty()) {
    absl::StrAppend(&text, " (at ", error.file, ":", error.line);
    if (!error.function.empty()) absl::StrAppend(&text, " in ", error.function);
    absl::StrAppend(&text, ")");
  }
  return text;
}

nlohmann::json RankErrorToJson(const RankError& error) {
  const RankDeath& death = error.death;
  return {{"type", error.type},
          {"message", error.message},
          {"file", error.file},
          {"line", error.line},
          {"function", error.function},
          {"log_tail", error.log_tail},
          {"signal", death.signal},
          {"core_dumped", death.core_dumped},
          {"oom_killed", death.oom_killed},
          {"peak_rss_bytes", death.peak_rss_bytes},
          {"memory_limit_bytes", death.memory_limit_bytes}};
}

namespace {

// The death's fields, each absent from what agents before them wrote.
absl::Status GetDeath(const JsonFields& fields, RankDeath* death) {
  if (fields.Optional("signal") != nullptr) {
    FP_RETURN_IF_ERROR(fields.Get("signal", 0, 64, &death->signal));
  }
  if (fields.Optional("core_dumped") != nullptr) {
    FP_RETURN_IF_ERROR(fields.Get("core_dumped", &death->core_dumped));
  }
  if (fields.Optional("oom_killed") != nullptr) {
    FP_RETURN_IF_ERROR(fields.Get("oom_killed", &death->oom_killed));
  }
  if (fields.Optional("peak_rss_bytes") != nullptr) {
    FP_RETURN_IF_ERROR(fields.Get("peak_rss_bytes", &death->peak_rss_bytes));
  }
  if (fields.Optional("memory_limit_bytes") != nullptr) {
    FP_RETURN_IF_ERROR(fields.Get("memory_limit_bytes", &death->memory_limit_bytes));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RankError> RankErrorFromJson(const nlohmann::json& json,
                                            absl::string_view document) {
  if (!json.is_object()) return InvalidField(document, "error", "is not an object or null");
  RankError error;
  JsonFields fields(json, document);
  FP_RETURN_IF_ERROR(GetBounded(fields, document, "type", kMaxErrorNameBytes, &error.type));
  FP_RETURN_IF_ERROR(
      GetBounded(fields, document, "message", kMaxErrorMessageBytes, &error.message));
  FP_RETURN_IF_ERROR(GetBounded(fields, document, "file", kMaxErrorNameBytes, &error.file));
  FP_RETURN_IF_ERROR(fields.Get("line", 0, std::numeric_limits<int>::max(), &error.line));
  FP_RETURN_IF_ERROR(
      GetBounded(fields, document, "function", kMaxErrorNameBytes, &error.function));
  FP_RETURN_IF_ERROR(
      GetBounded(fields, document, "log_tail", kMaxLogTailBytes, &error.log_tail));
  FP_RETURN_IF_ERROR(GetDeath(fields, &error.death));
  return error;
}

}  // namespace fleetplan
