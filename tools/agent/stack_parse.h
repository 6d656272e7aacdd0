#ifndef FLEETPLAN_TOOLS_AGENT_STACK_PARSE_H_
#define FLEETPLAN_TOOLS_AGENT_STACK_PARSE_H_

// The stacks of a live process as the stack tools print them, read into
// frames: gdb's `thread apply all py-bt` (Python frames, from the
// interpreter's gdb extension, python3.X-dbg on Debian) and `eu-stack -m -p`
// (native frames, elfutils). These tools print for people, not programs;
// this file is the one place that reads them, and its tests hold recorded
// outputs (testdata/pybt_*.txt, testdata/eu_stack_*.txt).

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tools/protocol/stack_report.h"

namespace fleetplan {

struct StackFrame {
  std::string function;  // "load_shard", "sleep" (a builtin), "clock_nanosleep"
  std::string file;      // a Python frame's source file; empty for others
  int line = 0;          // a Python frame's line; 0 for others
  std::string module;    // a native frame's binary or library; empty for Python
};

struct ThreadStack {
  int tid = 0;
  std::vector<StackFrame> frames;  // innermost first
};

// Every thread of gdb's `thread apply all py-bt` output that has Python
// frames; builtins ("<built-in method sleep of module object ...>") are
// frames named after the method.
std::vector<ThreadStack> ParsePyBt(absl::string_view output);

// Every thread of `eu-stack -m -p PID` output.
std::vector<ThreadStack> ParseEuStack(absl::string_view output);

// A Python frame in the interpreter's own library, site-packages or
// dist-packages, or a frozen module: not the user's code.
bool IsLibraryPythonFile(absl::string_view file);

// Where process `pid` stands in the user's code: the innermost user frame
// of its main thread (tid == pid; else of the first thread that has one) in
// `python`, with the frame it called; without Python frames, the innermost
// native frame of the program's own binary (not a shared library). nullopt
// when neither is found.
std::optional<StackWhere> InnermostUserFrame(int pid, const std::vector<ThreadStack>& python,
                                             const std::vector<ThreadStack>& native);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_STACK_PARSE_H_
