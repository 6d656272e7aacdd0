#include "tools/cli/subcommands.h"

#include <cstdio>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tools/cli/completion.h"
#include "tools/cli/help_text.h"
#include "tools/cli/subcommand_mains.h"
#include "tools/cli/version.h"
#include "tools/util/did_you_mean.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {
namespace {

constexpr char kHoldCommand[] = "__hold";

std::vector<CommandSummary> Listed() {
  std::vector<CommandSummary> listed;
  for (const Subcommand& row : Subcommands()) {
    if (row.summary[0] != '\0') listed.push_back({row.name, row.summary});
  }
  return listed;
}

CommandDoc Describe(const Subcommand& row) {
  CommandDoc doc;
  CommandLine line;
  line.name = row.name;
  line.summary = row.summary;
  line.describe = &doc;
  row.run(line);
  return doc;
}

int UnknownCommand(absl::string_view name) {
  std::vector<std::string> names;
  for (const CommandSummary& listed : Listed()) names.push_back(listed.name);
  std::fprintf(stderr, "fleetplan: '%s' is not a command%s (see fleetplan help)\n",
               std::string(name).c_str(), DidYouMean(name, names).c_str());
  return kExitBadInput;
}

int HelpMain(const CommandLine& line) {
  CommandDoc doc;
  doc.usage = {"[COMMAND]", "--man [COMMAND]"};
  doc.description =
      "Prints what fleetplan's commands are, or one command's usage, options, examples and "
      "exit codes (the same as `fleetplan COMMAND --help`).";
  doc.examples = {{"fleetplan help apply", "apply's options"}};
  doc.exit_codes = {kExitOk, kExitBadInput};
  doc.operands = OperandKind::kCommand;
  doc.min_operands = 0;
  doc.operands_expected = "expected at most one command";
  bool man = false;
  FlagSet flags(std::move(doc));
  flags.Switch("man", &man, "Print the man page (roff) instead of the text.");
  std::vector<std::string> operands;
  if (std::optional<int> done = flags.Parse(line, &operands)) return *done;
  if (operands.empty()) {
    std::fputs((man ? RenderOverviewManPage(Listed(), kFleetplanVersion)
                    : RenderOverviewText(Listed()))
                   .c_str(),
               stdout);
    return kExitOk;
  }
  const Subcommand* row = FindSubcommand(operands[0]);
  if (row == nullptr) return UnknownCommand(operands[0]);
  CommandDoc described = Describe(*row);
  std::fputs((man ? RenderManPage(described, kFleetplanVersion) : RenderHelpText(described))
                 .c_str(),
             stdout);
  return kExitOk;
}

int VersionMain(const CommandLine& line) {
  CommandDoc doc;
  doc.usage = {""};
  doc.description = "Prints fleetplan's version.";
  doc.exit_codes = {kExitOk, kExitBadInput};
  doc.operands = OperandKind::kNone;
  doc.min_operands = doc.max_operands = 0;
  doc.operands_expected = "expected no operand";
  FlagSet flags(std::move(doc));
  std::vector<std::string> operands;
  if (std::optional<int> done = flags.Parse(line, &operands)) return *done;
  std::printf("fleetplan %s\n", kFleetplanVersion);
  return kExitOk;
}

int CompletionMain(const CommandLine& line) {
  CommandDoc doc;
  doc.usage = {"bash", "zsh"};
  doc.description =
      "Prints the completion script for bash or zsh: subcommands, flags, .toml files and the "
      "node names of the spec on the command line. The install puts both where the shells "
      "look; without it: source <(fleetplan completion bash).";
  doc.exit_codes = {kExitOk, kExitBadInput};
  doc.operands = OperandKind::kNone;
  doc.operands_expected = "expected bash or zsh";
  FlagSet flags(std::move(doc));
  std::vector<std::string> operands;
  if (std::optional<int> done = flags.Parse(line, &operands)) return *done;
  std::vector<CommandDoc> docs;
  for (const Subcommand& row : Subcommands()) {
    if (row.summary[0] != '\0') docs.push_back(Describe(row));
  }
  if (operands[0] == "bash") {
    std::fputs(RenderBashCompletion(docs).c_str(), stdout);
  } else if (operands[0] == "zsh") {
    std::fputs(RenderZshCompletion(docs).c_str(), stdout);
  } else {
    std::fprintf(stderr, "fleetplan completion: expected bash or zsh, not '%s'\n",
                 operands[0].c_str());
    return kExitBadInput;
  }
  return kExitOk;
}

int Run(const Subcommand& row, std::vector<std::string> args, const char* argv0) {
  CommandLine line;
  line.name = row.name;
  line.summary = row.summary;
  line.args = std::move(args);
  line.argv0 = argv0;
  return row.run(line);
}

}  // namespace

const std::vector<Subcommand>& Subcommands() {
  static const std::vector<Subcommand>* table = new std::vector<Subcommand>{
      {"plan", "show what apply will do, per phase and node, changing nothing", PlanMain},
      {"apply", "build, sync, check and start the job on every node, and follow it",
       ApplyMain},
      {"status", "the state of the spec's job on every node", StatusMain},
      {"logs", "the ranks' output, prefixed [node/rank]", LogsMain},
      {"stacks", "where every rank of the running job stands, grouped; the job runs on",
       StacksMain},
      {"top", "every node's CPU, memory and GPUs and every rank's steps, live", TopMain},
      {"dashboard", "the job in a browser: nodes, ranks, curves, logs, stop", DashboardMain},
      {"stop", "stop the spec's job on every node", StopMain},
      {"exec", "run a command on every node, in its environment and workdir", ExecMain},
      {"disconnect", "close the connections kept open to the spec's nodes", DisconnectMain},
      {"help", "fleetplan's commands, or one command's options", HelpMain},
      {"version", "print fleetplan's version", VersionMain},
      {"completion", "print the bash or zsh completion script", CompletionMain},
      {"__complete-nodes", "", CompleteNodesMain},
      {kHoldCommand, "", HoldMain},
  };
  return *table;
}

const Subcommand* FindSubcommand(absl::string_view name) {
  for (const Subcommand& row : Subcommands()) {
    if (name == row.name) return &row;
  }
  return nullptr;
}

int FleetplanMain(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(RenderOverviewText(Listed()).c_str(), stdout);
    return args.empty() ? kExitBadInput : kExitOk;
  }
  if (args[0] == "--version") args[0] = "version";
  const Subcommand* row = FindSubcommand(args[0]);
  if (row == nullptr) return UnknownCommand(args[0]);
  return Run(*row, std::vector<std::string>(args.begin() + 1, args.end()), argv[0]);
}

int SubcommandMain(absl::string_view name, int argc, char** argv) {
  // The commands start the connection holder from their own executable,
  // whichever binary of the table that is.
  if (argc > 1 && absl::string_view(argv[1]) == kHoldCommand) return FleetplanMain(argc, argv);
  const Subcommand* row = FindSubcommand(name);
  if (row == nullptr) return UnknownCommand(name);
  return Run(*row, std::vector<std::string>(argv + 1, argv + argc), argv[0]);
}

}  // namespace fleetplan
