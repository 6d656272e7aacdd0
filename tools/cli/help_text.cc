#include "tools/cli/help_text.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {
namespace {

constexpr size_t kWidth = 80;
constexpr size_t kFlagColumn = 28;

// The commands' overview as a CommandDoc, so that it prints like any
// command's help.
CommandDoc OverviewDoc(const std::vector<CommandSummary>& commands) {
  CommandDoc doc;
  doc.summary = "plan and run multi-node PyTorch training from a TOML spec";
  doc.usage = {"COMMAND [options] [SPEC.toml]", "help COMMAND", "version"};
  std::string list;
  size_t width = 0;
  for (const CommandSummary& command : commands) width = std::max(width, command.name.size());
  for (const CommandSummary& command : commands) {
    absl::StrAppend(&list, "  ", command.name, std::string(width + 2 - command.name.size(), ' '),
                    command.summary, "\n");
  }
  doc.description = absl::StrCat(
      "fleetplan turns a cluster described in a TOML file into a plan (ssh keys, the python "
      "environment, code sync to the same path on every node, preflight checks, launch) and "
      "runs it in parallel through the spec's transport (local, ssh, docker, slurm). The job "
      "outlives the command: status, logs and stop reach it through the same transports.\n\n"
      "Commands:\n\n",
      list,
      "\nEach command's options: `fleetplan help COMMAND` or `fleetplan COMMAND --help`; "
      "relative paths are taken from the current directory.");
  doc.examples = {
      {"fleetplan plan cluster.toml", "exactly what apply will do, per node"},
      {"fleetplan apply cluster.toml", "do it in parallel, start training and follow it"},
      {"fleetplan logs cluster.toml --follow", "the ranks' output, as it comes"},
  };
  for (const ExitCodeMeaning& entry : kExitCodeTable) doc.exit_codes.push_back(entry.code);
  doc.exit_note = "when the job fails: the exit status of its first failing rank";
  return doc;
}

std::string Spaces(size_t n) { return std::string(n, ' '); }

// `text` wrapped to kWidth, each line starting with `indent` spaces; the
// first line starts at column `first_column` (already written).
std::string Wrap(absl::string_view text, size_t indent, size_t first_column = 0) {
  std::string out;
  size_t column = first_column;
  if (column < indent) {
    out = Spaces(indent - column);
    column = indent;
  }
  bool line_empty = true;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line_empty && column + 1 + word.size() > kWidth) {
      absl::StrAppend(&out, "\n", Spaces(indent));
      column = indent;
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++column;
    }
    absl::StrAppend(&out, word);
    column += word.size();
    line_empty = false;
  }
  return out;
}

// Paragraphs separated by blank lines; a paragraph whose lines start with
// two spaces is kept as written (a list), the others are wrapped.
std::vector<std::string> Paragraphs(absl::string_view text) {
  return absl::StrSplit(text, "\n\n", absl::SkipWhitespace());
}

bool Verbatim(absl::string_view paragraph) { return absl::StartsWith(paragraph, "  "); }

std::string Joined(absl::string_view paragraph) {
  return absl::StrReplaceAll(paragraph, {{"\n", " "}});
}

std::string FlagSpelling(const FlagDoc& flag) {
  std::string text = absl::StrCat("--", flag.name);
  if (flag.kind != ValueKind::kSwitch) absl::StrAppend(&text, "=", flag.value_name);
  return text;
}

std::string FlagHelp(const FlagDoc& flag) {
  std::string help = flag.help;
  if (flag.repeatable) absl::StrAppend(&help, " Repeatable; or separate with commas.");
  if (!flag.default_text.empty()) absl::StrAppend(&help, " (default: ", flag.default_text, ")");
  return help;
}

// The groups' headings in the order their first flag was declared.
std::vector<std::string> Groups(const CommandDoc& doc) {
  std::vector<std::string> groups;
  for (const FlagDoc& flag : doc.flags) {
    if (std::find(groups.begin(), groups.end(), flag.group) == groups.end()) {
      groups.push_back(flag.group);
    }
  }
  return groups;
}

std::string CommandName(const CommandDoc& doc) {
  return doc.name.empty() ? "fleetplan" : absl::StrCat("fleetplan ", doc.name);
}

std::string ExitCodesText(const CommandDoc& doc) {
  std::string out = "Exit codes:\n";
  for (int code : doc.exit_codes) {
    const char* meaning = ExitCodeMeaningOf(code);
    absl::StrAppend(&out, "  ", code, Spaces(code < 10 ? 4 : code < 100 ? 3 : 2),
                    meaning != nullptr ? meaning : "", "\n");
  }
  if (!doc.exit_note.empty()) absl::StrAppend(&out, "  ", Wrap(doc.exit_note, 2, 2), "\n");
  return out;
}

// roff: backslashes and dashes escaped; a line may not start with . or '.
std::string Roff(absl::string_view text) {
  std::string out = absl::StrReplaceAll(text, {{"\\", "\\e"}, {"-", "\\-"}});
  if (absl::StartsWith(out, ".") || absl::StartsWith(out, "'")) out = absl::StrCat("\\&", out);
  return out;
}

std::string RoffParagraphs(absl::string_view text) {
  std::string out;
  for (const std::string& paragraph : Paragraphs(text)) {
    if (Verbatim(paragraph)) {
      absl::StrAppend(&out, ".PP\n.nf\n");
      for (absl::string_view line : absl::StrSplit(paragraph, '\n')) {
        absl::StrAppend(&out, Roff(absl::StripLeadingAsciiWhitespace(line)), "\n");
      }
      absl::StrAppend(&out, ".fi\n");
    } else {
      absl::StrAppend(&out, ".PP\n", Roff(Joined(paragraph)), "\n");
    }
  }
  return out;
}

std::string ManHeader(const std::string& title, const std::string& version) {
  std::string upper = title;
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  return absl::StrCat(".TH ", Roff(upper), " 1 \"\" \"fleetplan ", Roff(version),
                      "\" \"fleetplan manual\"\n");
}

std::string ManBody(const CommandDoc& doc) {
  std::string out = ".SH SYNOPSIS\n.nf\n";
  for (const std::string& usage : doc.usage) {
    absl::StrAppend(&out, "\\fB", Roff(CommandName(doc)), "\\fR ", Roff(usage), "\n");
  }
  absl::StrAppend(&out, ".fi\n.SH DESCRIPTION\n", RoffParagraphs(doc.description));
  if (!doc.flags.empty()) absl::StrAppend(&out, ".SH OPTIONS\n");
  for (const std::string& group : Groups(doc)) {
    absl::StrAppend(&out, ".SS ", Roff(group), "\n");
    for (const FlagDoc& flag : doc.flags) {
      if (flag.group != group) continue;
      absl::StrAppend(&out, ".TP\n\\fB\\-\\-", Roff(flag.name), "\\fR");
      if (flag.kind != ValueKind::kSwitch) absl::StrAppend(&out, "=\\fI", Roff(flag.value_name), "\\fR");
      absl::StrAppend(&out, "\n", Roff(FlagHelp(flag)), "\n");
    }
  }
  if (!doc.examples.empty()) absl::StrAppend(&out, ".SH EXAMPLES\n");
  for (const Example& example : doc.examples) {
    absl::StrAppend(&out, ".TP\n\\fB", Roff(example.command), "\\fR\n", Roff(example.what), "\n");
  }
  absl::StrAppend(&out, ".SH EXIT STATUS\n");
  for (int code : doc.exit_codes) {
    const char* meaning = ExitCodeMeaningOf(code);
    absl::StrAppend(&out, ".TP\n.B ", code, "\n", Roff(meaning != nullptr ? meaning : ""), "\n");
  }
  if (!doc.exit_note.empty()) absl::StrAppend(&out, ".PP\n", Roff(doc.exit_note), "\n");
  return out;
}

}  // namespace

std::string RenderHelpText(const CommandDoc& doc) {
  std::string name = CommandName(doc);
  std::string out = Wrap(absl::StrCat(name, " - ", doc.summary), 2, 2);
  absl::StrAppend(&out, "\n\nUsage:\n");
  for (const std::string& usage : doc.usage) absl::StrAppend(&out, "  ", name, " ", usage, "\n");
  for (const std::string& paragraph : Paragraphs(doc.description)) {
    absl::StrAppend(&out, "\n", Verbatim(paragraph) ? paragraph : Wrap(Joined(paragraph), 0),
                    "\n");
  }
  for (const std::string& group : Groups(doc)) {
    absl::StrAppend(&out, "\n", group, ":\n");
    for (const FlagDoc& flag : doc.flags) {
      if (flag.group != group) continue;
      std::string spelling = absl::StrCat("  ", FlagSpelling(flag));
      if (spelling.size() + 2 > kFlagColumn) {
        absl::StrAppend(&out, spelling, "\n", Wrap(FlagHelp(flag), kFlagColumn), "\n");
      } else {
        absl::StrAppend(&out, spelling, Wrap(FlagHelp(flag), kFlagColumn, spelling.size()), "\n");
      }
    }
  }
  if (!doc.examples.empty()) absl::StrAppend(&out, "\nExamples:\n");
  for (const Example& example : doc.examples) {
    absl::StrAppend(&out, "  ", example.command, "\n", Wrap(example.what, 6), "\n");
  }
  absl::StrAppend(&out, "\n", ExitCodesText(doc));
  return out;
}

std::string RenderOverviewText(const std::vector<CommandSummary>& commands) {
  return RenderHelpText(OverviewDoc(commands));
}

std::string RenderManPage(const CommandDoc& doc, const std::string& version) {
  std::string page = absl::StrCat("fleetplan-", doc.name);
  return absl::StrCat(ManHeader(page, version), ".SH NAME\n", Roff(page), " \\- ",
                      Roff(doc.summary), "\n", ManBody(doc), ".SH SEE ALSO\n.BR fleetplan (1)\n");
}

std::string RenderOverviewManPage(const std::vector<CommandSummary>& commands,
                                  const std::string& version) {
  CommandDoc doc = OverviewDoc(commands);
  std::vector<std::string> pages;
  for (const CommandSummary& command : commands) {
    pages.push_back(absl::StrCat(".BR fleetplan\\-", Roff(command.name), " (1)"));
  }
  return absl::StrCat(ManHeader("fleetplan", version), ".SH NAME\nfleetplan \\- ",
                      Roff(doc.summary), "\n", ManBody(doc), ".SH SEE ALSO\n",
                      absl::StrJoin(pages, ",\n"), "\n");
}

}  // namespace fleetplan
