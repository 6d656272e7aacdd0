#ifndef FLEETPLAN_TOOLS_PROTOCOL_CHECK_LINE_H_
#define FLEETPLAN_TOOLS_PROTOCOL_CHECK_LINE_H_

// The lines a preflight check prints on a node, one per check or fact, in a
// fixed form that apply reads back:
//
//   fleetplan-check <check> ok|fail|skip <message>
//   fleetplan-fact <name> <value>
//
// The launch agent's preflight checks (tools/agent/preflight.h) print them,
// and the plan's shell around them where the agent cannot run; the
// executor parses them. Any other output line is ignored.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace fleetplan {

inline constexpr absl::string_view kCheckLinePrefix = "fleetplan-check";
inline constexpr absl::string_view kFactLinePrefix = "fleetplan-fact";

// The checks preflight runs (see tools/agent/preflight.h), in the order apply's
// summary shows them, and the facts they report.
// Not a check of its own: `skip` or `fail` for a node whose launch agent
// could not run its checks (not there yet, or it ended abnormally).
inline constexpr absl::string_view kCheckAgent = "agent";
inline constexpr absl::string_view kCheckWorkdir = "workdir";
inline constexpr absl::string_view kCheckPython = "python";
inline constexpr absl::string_view kCheckProgram = "program";
inline constexpr absl::string_view kCheckInterpreter = "interpreter";
inline constexpr absl::string_view kCheckLibraries = "libraries";
inline constexpr absl::string_view kCheckLibtorch = "libtorch";
inline constexpr absl::string_view kCheckGpus = "gpus";
inline constexpr absl::string_view kCheckPort = "port";
inline constexpr absl::string_view kCheckConnect = "connect";
inline constexpr absl::string_view kCheckNccl = "nccl";
// Not run by the script: `skip` for a node that is not there to check yet
// (`plan --check` of a docker container apply would create).
inline constexpr absl::string_view kCheckReach = "reach";
inline constexpr absl::string_view kFactLibtorch = "libtorch";  // <xxh3-128 hex> <size> <path>
// <version> <path>: the Python the job's program is, e.g. "3.11.2 /usr/bin/python3".
inline constexpr absl::string_view kFactInterpreter = "interpreter";
inline constexpr absl::string_view kFactNcclIfname = "nccl_socket_ifname";
inline constexpr absl::string_view kFactListening = "listening";  // <port>...

enum class CheckStatus { kOk, kFail, kSkip };

// "ok", "fail", "skip".
absl::string_view CheckStatusName(CheckStatus status);

// One check's result on one node.
struct CheckResult {
  std::string check;  // "workdir", "port", ...: one word
  CheckStatus status = CheckStatus::kOk;
  std::string message;  // one line
};

// `fleetplan-check <check> <status> <message>` (newlines in the message
// become spaces), without a trailing newline.
std::string FormatCheckLine(const CheckResult& result);

// `fleetplan-fact <name> <value>` (newlines in the value become spaces),
// without a trailing newline.
std::string FormatFactLine(absl::string_view name, absl::string_view value);

// What one node's check output said, in output order.
struct CheckOutput {
  std::vector<CheckResult> checks;
  std::vector<std::pair<std::string, std::string>> facts;  // name, value
};

// Reads the check and fact lines out of `output`; other lines, and lines
// of this form with an unknown status, are skipped.
CheckOutput ParseCheckOutput(absl::string_view output);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_CHECK_LINE_H_
