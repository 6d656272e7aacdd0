#ifndef FLEETPLAN_TOOLS_CLI_COMMAND_DOC_H_
#define FLEETPLAN_TOOLS_CLI_COMMAND_DOC_H_

// What a subcommand says about itself: its usage, flags (grouped), examples
// and exit codes. Plain data, rendered as --help text and man pages
// (help_text.h) and shell completions (completion.h).

#include <string>
#include <vector>

namespace fleetplan {

// What a flag's value is, for help and for completing it in a shell.
enum class ValueKind {
  kSwitch,     // no value: --json, --no-json
  kText,
  kNumber,
  kDuration,   // 90s, 20m
  kFile,
  kDirectory,
  kNode,       // a node name of the spec on the command line
  kChoice,     // one of FlagDoc::choices
};

struct FlagDoc {
  std::string name;        // as typed, without dashes: "accept-new-host-keys"
  std::string value_name;  // "N", "FILE"; "" for a switch
  std::string help;
  std::string group;         // the heading it is listed under
  std::string default_text;  // shown as "(default ...)"; "" for none
  ValueKind kind = ValueKind::kSwitch;
  std::vector<std::string> choices;  // for kChoice
  bool repeatable = false;           // a list: repeat the flag or separate with commas
};

// What the operands are, for completing them in a shell.
enum class OperandKind {
  kNone,
  kSpec,        // a .toml file
  kSpecOrPlan,  // a .toml spec or a saved .json plan
  kCommand,     // a subcommand's name (help)
};

struct Example {
  std::string command;  // "fleetplan plan cluster.toml"
  std::string what;     // what it does, one line
};

struct CommandDoc {
  std::string name;     // "plan"
  std::string summary;  // one line, lower case, no full stop
  // Each line follows "fleetplan NAME ": "[options] SPEC.toml".
  std::vector<std::string> usage;
  // Paragraphs separated by blank lines; wrapped when printed.
  std::string description;
  std::vector<FlagDoc> flags;
  std::vector<Example> examples;
  // Codes of kExitCodeTable (tools/util/exit_codes.h) this command returns.
  std::vector<int> exit_codes;
  // What else the exit status may be ("the exit status of the job's first
  // failing rank"); "" for nothing else.
  std::string exit_note;
  OperandKind operands = OperandKind::kSpec;
  // How many operands the command takes, and what to say otherwise.
  size_t min_operands = 1;
  size_t max_operands = 1;
  std::string operands_expected = "expected one spec file";
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_COMMAND_DOC_H_
