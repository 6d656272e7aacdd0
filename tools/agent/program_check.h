#ifndef FLEETPLAN_TOOLS_AGENT_PROGRAM_CHECK_H_
#define FLEETPLAN_TOOLS_AGENT_PROGRAM_CHECK_H_

// Preflight's program check: the job's program found where the launch will
// find it (a name without '/' on the PATH of the node's activated
// environment, as a shell does), and, for a Python interpreter, its version,
// which must be the same on every node (apply compares the facts).

#include <optional>
#include <string>
#include <utility>

#include "tools/protocol/check_line.h"

namespace fleetplan {

struct ProgramFindings {
  CheckResult check;      // kCheckProgram: ok naming the file, or fail
  std::string resolved;   // the file the launch will run; empty when none
  // The interpreter's version, when the program is a Python: a fact
  // (kFactInterpreter) or, when the version cannot be read, a skipped
  // kCheckInterpreter check saying why.
  std::optional<std::pair<std::string, std::string>> fact;
  std::optional<CheckResult> interpreter_skipped;
};

// Finds `program` on `path` (':'-separated) and reads a Python's version
// with `--version`.
ProgramFindings CheckProgram(const std::string& program, const std::string& path);

// "3.11.2" from `python3 --version`'s "Python 3.11.2"; nullopt for anything
// else.
std::optional<std::string> ParsePythonVersion(const std::string& output);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_PROGRAM_CHECK_H_
