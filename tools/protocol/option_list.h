#ifndef FLEETPLAN_TOOLS_PROTOCOL_OPTION_LIST_H_
#define FLEETPLAN_TOOLS_PROTOCOL_OPTION_LIST_H_

// A command's options declared once, bound to the fields of its struct, so
// that one declaration gives the writer (struct → argv), the parser (argv →
// struct) and the usage text. A struct declares them in `Bind`:
//
//   struct Greet {
//     std::string name;
//     int times = 1;
//     void Bind(OptionList& options) {
//       options.Text("name", "NAME", &name, "Whom to greet.");
//       options.Number("times", "N", &times, "How often.");
//     }
//     absl::Status Check() const { return absl::OkStatus(); }
//   };
//
// Options are written `--name=value` (a switch `--name`, or `--name=false`
// when it is on by default), only where they differ from the struct's
// default, in the order declared. The parser takes the same form, refuses
// an option the command does not declare (naming it, and the nearest one it
// does), one given twice, and operands where the command takes none;
// everything after `--` is an operand.

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fleetplan {

// One option bound to one field.
struct BoundOption {
  std::string name;        // without dashes: "log-dir"
  std::string value_name;  // "DIR"; empty for a switch
  std::string help;
  bool is_switch = false;
  std::function<std::string()> get;  // the field as written ("true"/"false" for a switch)
  std::function<absl::Status(absl::string_view)> set;
};

class OptionList {
 public:
  void Text(absl::string_view name, absl::string_view value_name, std::string* field,
            absl::string_view help);
  void Number(absl::string_view name, absl::string_view value_name, int* field,
              absl::string_view help);
  void Switch(absl::string_view name, bool* field, absl::string_view help);
  // Written as absl::FormatDuration does ("30s", "1m30s"), read as
  // absl::ParseDuration does.
  void Duration(absl::string_view name, absl::Duration* field, absl::string_view help);
  // Comma-separated; no item may hold a comma.
  void List(absl::string_view name, absl::string_view value_name, std::vector<std::string>* field,
            absl::string_view help);
  // A value of the caller's own type: `get` writes it, `set` reads it.
  void Custom(absl::string_view name, absl::string_view value_name, absl::string_view help,
              std::function<std::string()> get,
              std::function<absl::Status(absl::string_view)> set);
  // What follows `--`: the command's operands (commands without take none).
  void Operands(absl::string_view value_name, std::vector<std::string>* field);

  const std::vector<BoundOption>& options() const { return options_; }
  std::vector<std::string>* operands() const { return operands_; }
  const std::string& operands_name() const { return operands_name_; }

 private:
  std::vector<BoundOption> options_;
  std::vector<std::string>* operands_ = nullptr;
  std::string operands_name_;
};

// The arguments that write `values`, whose defaults are `defaults` (the same
// command's list, bound to a default-constructed struct).
std::vector<std::string> WriteOptionList(const OptionList& values, const OptionList& defaults);

// Sets the fields of `options` from `args`. InvalidArgument naming the
// offending argument.
absl::Status ParseOptionList(const std::vector<std::string>& args, const OptionList& options);

// `status` with "NAME: " before its message.
absl::Status NamingCommand(absl::string_view name, const absl::Status& status);

// The usage lines of `options`: `  --name=VALUE  help`, one per option.
std::string OptionListUsage(const OptionList& options);

// `command`'s options as arguments, those at their default left out.
template <typename T>
std::vector<std::string> WriteOptions(const T& command) {
  T values = command;
  T defaults;
  OptionList now, base;
  values.Bind(now);
  defaults.Bind(base);
  return WriteOptionList(now, base);
}

// A T from `args`, its own Check() passed. InvalidArgument naming `name`
// (the command) and what is wrong.
template <typename T>
absl::StatusOr<T> ParseOptions(absl::string_view name, const std::vector<std::string>& args) {
  T command;
  OptionList options;
  command.Bind(options);
  absl::Status parsed = ParseOptionList(args, options);
  if (parsed.ok()) parsed = command.Check();
  if (!parsed.ok()) return NamingCommand(name, parsed);
  return command;
}

// The usage lines of T's options.
template <typename T>
std::string OptionsUsage() {
  T command;
  OptionList options;
  command.Bind(options);
  return OptionListUsage(options);
}

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_OPTION_LIST_H_
