#ifndef FLEETPLAN_TOOLS_CLI_FLAG_SET_H_
#define FLEETPLAN_TOOLS_CLI_FLAG_SET_H_

// The one flags parser of the fleetplan commands. A subcommand declares its
// flags on a FlagSet, each bound to a field of its options, then parses its
// command line:
//
//   FlagSet flags(PlanDoc());
//   flags.Switch("json", &command.json, "Print the plan as JSON.");
//   std::vector<std::string> operands;
//   if (std::optional<int> done = flags.Parse(line, &operands)) return *done;
//
// Flags are spelled with dashes (--accept-new-host-keys); the underscored
// spelling (--accept_new_host_keys), one leading dash (-out) and --noNAME
// are accepted too, as the Abseil flags of earlier versions did. A value
// follows `=` or is the next argument; a switch takes no value but may be
// given one (--json=false); --no-NAME turns it off. Operands and flags mix
// in any order; everything after `--` is an operand.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/cli/command_doc.h"

namespace fleetplan {

// A subcommand's invocation.
struct CommandLine {
  std::string name;               // the subcommand: "plan"
  std::string summary;            // its row's summary in the subcommand table
  std::vector<std::string> args;  // what followed the subcommand's name
  std::string argv0;              // the binary, for finding files beside it
  // When set, the subcommand only describes itself: Parse() fills this
  // with its CommandDoc and returns 0 (help, man pages, completions).
  CommandDoc* describe = nullptr;
};

class FlagSet {
 public:
  // `doc` without its flags; they are added by the calls below.
  explicit FlagSet(CommandDoc doc);

  // Flags declared after this call are listed under `heading`.
  void Group(absl::string_view heading);

  void Switch(absl::string_view name, bool* target, absl::string_view help);
  void Text(absl::string_view name, absl::string_view value_name, std::string* target,
            absl::string_view help, ValueKind kind = ValueKind::kText);
  void Choice(absl::string_view name, std::string* target, std::vector<std::string> choices,
              absl::string_view help);
  void Number(absl::string_view name, absl::string_view value_name, int* target,
              absl::string_view help);
  void Duration(absl::string_view name, absl::Duration* target, absl::string_view help);
  // Repeatable; each value may hold several, separated by commas.
  void List(absl::string_view name, absl::string_view value_name,
            std::vector<std::string>* target, absl::string_view help,
            ValueKind kind = ValueKind::kText);

  // Parses `line.args` into the bound fields and `operands`. Returns the
  // exit code when the command ends here: 0 after printing --help (or
  // describing itself to `line.describe`), kExitBadInput after printing
  // what is wrong with the command line; nullopt to go on.
  std::optional<int> Parse(const CommandLine& line, std::vector<std::string>* operands);

  // The flags as parsed from `args`, or InvalidArgument saying what is
  // wrong. Parse() without printing.
  absl::Status ParseArgs(const std::vector<std::string>& args,
                         std::vector<std::string>* operands);

  const CommandDoc& doc() const { return doc_; }

 private:
  struct Flag {
    FlagDoc doc;
    std::function<absl::Status(absl::string_view)> set;
  };

  void Add(FlagDoc doc, std::function<absl::Status(absl::string_view)> set);
  const Flag* Find(absl::string_view name) const;
  // Sets the flag `arg` names (`*next` is the argument after it, taken as
  // its value when needed; advanced past it then).
  absl::Status ParseFlag(absl::string_view arg, const std::vector<std::string>& args,
                         size_t* next);

  CommandDoc doc_;
  std::vector<Flag> flags_;
  std::string group_ = "Options";
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_FLAG_SET_H_
