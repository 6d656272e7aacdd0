#include "tools/agent/stack_parse.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "re2/re2.h"

namespace fleetplan {
namespace {

re2::StringPiece Piece(absl::string_view text) { return {text.data(), text.size()}; }

absl::string_view BaseName(absl::string_view path) {
  size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

// "<built-in method sleep of module object at remote 0x7f..>" → "sleep".
std::optional<StackFrame> BuiltinFrame(absl::string_view line) {
  static const LazyRE2 kBuiltin = {R"re(<built-in (?:method|function) ([A-Za-z_][\w.]*))re"};
  std::string name;
  if (!RE2::PartialMatch(Piece(line), *kBuiltin, &name)) return std::nullopt;
  return StackFrame{name, "", 0, ""};
}

bool IsSharedLibrary(absl::string_view module) {
  return absl::StrContains(BaseName(module), ".so");
}

std::optional<StackWhere> PythonWhere(const ThreadStack& thread) {
  for (size_t i = 0; i < thread.frames.size(); ++i) {
    const StackFrame& frame = thread.frames[i];
    if (frame.file.empty() || IsLibraryPythonFile(frame.file)) continue;
    std::string callee = i > 0 ? thread.frames[i - 1].function : "";
    return StackWhere{frame.function, std::string(BaseName(frame.file)), frame.line, callee};
  }
  return std::nullopt;
}

std::optional<StackWhere> NativeWhere(const ThreadStack& thread) {
  for (size_t i = 0; i < thread.frames.size(); ++i) {
    const StackFrame& frame = thread.frames[i];
    if (frame.module.empty() || IsSharedLibrary(frame.module)) continue;
    std::string callee = i > 0 ? thread.frames[i - 1].function : "";
    return StackWhere{frame.function, std::string(BaseName(frame.module)), 0, callee};
  }
  return std::nullopt;
}

// The main thread's answer first, then any other thread's.
std::optional<StackWhere> FirstWhere(int pid, const std::vector<ThreadStack>& threads,
                                     std::optional<StackWhere> (*where)(const ThreadStack&)) {
  for (const ThreadStack& thread : threads) {
    if (thread.tid != pid) continue;
    if (std::optional<StackWhere> found = where(thread)) return found;
  }
  for (const ThreadStack& thread : threads) {
    if (thread.tid == pid) continue;
    if (std::optional<StackWhere> found = where(thread)) return found;
  }
  return std::nullopt;
}

}  // namespace

std::vector<ThreadStack> ParsePyBt(absl::string_view output) {
  static const LazyRE2 kThread = {R"re(^Thread \d+ \(Thread 0x[0-9a-f]+ \(LWP (\d+)\))re"};
  static const LazyRE2 kFile = {R"re(^  File "(.*)", line (\d+), in (.+)$)re"};
  std::vector<ThreadStack> threads;
  ThreadStack* current = nullptr;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    int tid;
    std::string file;
    int number;
    std::string function;
    if (RE2::PartialMatch(Piece(line), *kThread, &tid)) {
      threads.push_back(ThreadStack{tid, {}});
      current = &threads.back();
    } else if (current == nullptr) {
      continue;
    } else if (RE2::FullMatch(Piece(line), *kFile, &file, &number, &function)) {
      current->frames.push_back(StackFrame{function, file, number, ""});
    } else if (absl::StartsWith(line, "  <built-in ")) {
      if (std::optional<StackFrame> builtin = BuiltinFrame(line)) {
        current->frames.push_back(*builtin);
      }
    }
  }
  threads.erase(std::remove_if(threads.begin(), threads.end(),
                               [](const ThreadStack& t) { return t.frames.empty(); }),
                threads.end());
  return threads;
}

std::vector<ThreadStack> ParseEuStack(absl::string_view output) {
  static const LazyRE2 kThread = {R"re(^TID (\d+):)re"};
  // "#3  0x00007f.. name - /path/module"; the name may be missing.
  static const LazyRE2 kFrame = {R"re(^#\d+\s+0x[0-9a-f]+(?: (.*?))??(?: - (.*))?$)re"};
  std::vector<ThreadStack> threads;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    int tid;
    std::string function;
    std::string module;
    if (RE2::PartialMatch(Piece(line), *kThread, &tid)) {
      threads.push_back(ThreadStack{tid, {}});
    } else if (!threads.empty() && RE2::FullMatch(Piece(line), *kFrame, &function, &module)) {
      // "time_sleep.lto_priv.0" → "time_sleep"; "clock_nanosleep@GLIBC_2.2.5" likewise.
      function = std::string(absl::StripAsciiWhitespace(function));
      function = function.substr(0, std::min(function.find('@'), function.find(".lto_priv")));
      threads.back().frames.push_back(StackFrame{function, "", 0, module});
    }
  }
  return threads;
}

bool IsLibraryPythonFile(absl::string_view file) {
  static const LazyRE2 kLibrary = {
      R"((^<frozen |^<string>$|/site-packages/|/dist-packages/|/lib/python\d+(\.\d+)?/))"};
  return RE2::PartialMatch(Piece(file), *kLibrary);
}

std::optional<StackWhere> InnermostUserFrame(int pid, const std::vector<ThreadStack>& python,
                                             const std::vector<ThreadStack>& native) {
  if (std::optional<StackWhere> where = FirstWhere(pid, python, PythonWhere)) return where;
  return FirstWhere(pid, native, NativeWhere);
}

}  // namespace fleetplan
