#include "tools/cli/completion.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace fleetplan {
namespace {

bool TakesValue(const FlagDoc& flag) { return flag.kind != ValueKind::kSwitch; }

// The first sentence of a flag's help, for zsh's one-line descriptions.
std::string FirstSentence(const std::string& help) {
  size_t end = help.find(". ");
  std::string sentence = help.substr(0, end);
  if (!sentence.empty() && sentence.back() == '.') sentence.pop_back();
  return sentence;
}

// Inside single quotes in either shell.
std::string SingleQuoted(absl::string_view text) {
  return absl::StrCat("'", absl::StrReplaceAll(text, {{"'", "'\\''"}}), "'");
}

std::vector<std::string> Names(const std::vector<CommandDoc>& docs) {
  std::vector<std::string> names;
  for (const CommandDoc& doc : docs) names.push_back(doc.name);
  return names;
}

// The bash words that complete a value of `kind`.
std::string BashValues(const FlagDoc& flag) {
  switch (flag.kind) {
    case ValueKind::kFile:
      return "compopt -o filenames; COMPREPLY=($(compgen -f -- \"$cur\"))";
    case ValueKind::kDirectory:
      return "compopt -o filenames; COMPREPLY=($(compgen -d -- \"$cur\"))";
    case ValueKind::kNode:
      return "COMPREPLY=($(compgen -W \"$(_fleetplan_nodes \"$spec\")\" -- \"$cur\"))";
    case ValueKind::kChoice:
      return absl::StrCat("COMPREPLY=($(compgen -W ", SingleQuoted(absl::StrJoin(flag.choices, " ")),
                          " -- \"$cur\"))");
    default:
      return "COMPREPLY=()";  // a number, a duration, text: nothing to offer
  }
}

std::string BashOperands(const CommandDoc& doc, const std::vector<CommandDoc>& docs) {
  switch (doc.operands) {
    case OperandKind::kSpec:
      return "_fleetplan_files toml";
    case OperandKind::kSpecOrPlan:
      return "_fleetplan_files toml json";
    case OperandKind::kCommand:
      return absl::StrCat("COMPREPLY=($(compgen -W ", SingleQuoted(absl::StrJoin(Names(docs), " ")),
                          " -- \"$cur\"))");
    case OperandKind::kNone:
      return "COMPREPLY=()";
  }
  return "COMPREPLY=()";
}

std::string BashCommandCase(const CommandDoc& doc, const std::vector<CommandDoc>& docs) {
  std::string out = absl::StrCat("    ", doc.name, ")\n      case $flag in\n");
  std::vector<std::string> flags;
  for (const FlagDoc& flag : doc.flags) {
    flags.push_back(absl::StrCat("--", flag.name));
    if (TakesValue(flag)) {
      absl::StrAppend(&out, "        --", flag.name, ") ", BashValues(flag), "; return ;;\n");
    }
  }
  flags.push_back("--help");
  absl::StrAppend(&out, "      esac\n      if [[ $cur == -* ]]; then\n",
                  "        COMPREPLY=($(compgen -W ", SingleQuoted(absl::StrJoin(flags, " ")),
                  " -- \"$cur\"))\n      else\n        ", BashOperands(doc, docs),
                  "\n      fi\n      ;;\n");
  return out;
}

// zsh's _arguments spec of a flag: --name=[help]:VALUE:action.
std::string ZshFlag(const FlagDoc& flag) {
  std::string help = absl::StrReplaceAll(FirstSentence(flag.help),
                                         {{"[", "\\["}, {"]", "\\]"}, {":", "\\:"}});
  std::string spec = absl::StrCat(flag.repeatable ? "*" : "", "--", flag.name,
                                  TakesValue(flag) ? "=" : "", "[", help, "]");
  if (!TakesValue(flag)) return SingleQuoted(spec);
  std::string action;
  switch (flag.kind) {
    case ValueKind::kFile: action = "_files"; break;
    case ValueKind::kDirectory: action = "_files -/"; break;
    case ValueKind::kNode: action = "_fleetplan_nodes"; break;
    case ValueKind::kChoice: action = absl::StrCat("(", absl::StrJoin(flag.choices, " "), ")"); break;
    default: action = " "; break;
  }
  return SingleQuoted(absl::StrCat(spec, ":", flag.value_name, ":", action));
}

std::string ZshOperands(const CommandDoc& doc, const std::vector<CommandDoc>& docs) {
  switch (doc.operands) {
    case OperandKind::kSpec:
      return "'1:spec:_files -g \"*.toml(-.)\"'";
    case OperandKind::kSpecOrPlan:
      return "'1:spec or saved plan:_files -g \"*.(toml|json)(-.)\"'";
    case OperandKind::kCommand:
      return SingleQuoted(absl::StrCat("1:command:(", absl::StrJoin(Names(docs), " "), ")"));
    case OperandKind::kNone:
      return "";
  }
  return "";
}

}  // namespace

std::string RenderBashCompletion(const std::vector<CommandDoc>& docs) {
  std::string out = absl::StrCat(
      "# bash completion for fleetplan; made by `fleetplan completion bash`.\n"
      "_fleetplan_nodes() {\n"
      "  [[ -n $1 ]] && fleetplan __complete-nodes \"$1\" 2>/dev/null\n"
      "}\n"
      "# Files ending in one of the given extensions, and directories.\n"
      "_fleetplan_files() {\n"
      "  local ext\n"
      "  compopt -o filenames\n"
      "  COMPREPLY=($(compgen -d -- \"$cur\"))\n"
      "  for ext in \"$@\"; do COMPREPLY+=($(compgen -f -X \"!*.$ext\" -- \"$cur\")); done\n"
      "}\n"
      "_fleetplan() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
      "  local cmd='' spec='' flag='' word i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    word=${COMP_WORDS[i]}\n"
      "    if [[ $word == -- ]]; then COMPREPLY=($(compgen -c -- \"$cur\")); return; fi\n"
      "    if [[ -z $cmd && $word != -* ]]; then cmd=$word\n"
      "    elif [[ $word == *.toml ]]; then spec=$word; fi\n"
      "  done\n"
      "  # bash splits --flag=VALUE at the '=' (COMP_WORDBREAKS).\n"
      "  if [[ $cur == = ]]; then flag=$prev; cur=''\n"
      "  elif [[ $prev == = ]]; then flag=${COMP_WORDS[COMP_CWORD-2]}\n"
      "  elif [[ $prev == --* ]]; then flag=$prev; fi\n"
      "  case $cmd in\n"
      "    '') COMPREPLY=($(compgen -W ",
      SingleQuoted(absl::StrJoin(Names(docs), " ")), " -- \"$cur\")) ;;\n");
  for (const CommandDoc& doc : docs) absl::StrAppend(&out, BashCommandCase(doc, docs));
  absl::StrAppend(&out, "  esac\n}\ncomplete -F _fleetplan fleetplan\n");
  return out;
}

std::string RenderZshCompletion(const std::vector<CommandDoc>& docs) {
  std::string out =
      "#compdef fleetplan\n"
      "# zsh completion for fleetplan; made by `fleetplan completion zsh`.\n"
      "_fleetplan_nodes() {\n"
      "  local spec=${${(M)words:#*.toml}[1]}\n"
      "  [[ -n $spec ]] || return 1\n"
      "  local -a nodes\n"
      "  nodes=(${(f)\"$(fleetplan __complete-nodes ${(Q)spec} 2>/dev/null)\"})\n"
      "  compadd -a nodes\n"
      "}\n"
      "_fleetplan() {\n"
      "  local -a commands\n"
      "  commands=(\n";
  for (const CommandDoc& doc : docs) {
    absl::StrAppend(&out, "    ",
                    SingleQuoted(absl::StrCat(doc.name, ":",
                                              absl::StrReplaceAll(doc.summary, {{":", "\\:"}}))),
                    "\n");
  }
  absl::StrAppend(&out,
                  "  )\n"
                  "  if (( CURRENT == 2 )); then\n"
                  "    _describe -t commands 'fleetplan command' commands\n"
                  "    return\n"
                  "  fi\n"
                  "  local cmd=$words[2]\n"
                  "  shift words\n"
                  "  (( CURRENT-- ))\n"
                  "  case $cmd in\n");
  for (const CommandDoc& doc : docs) {
    absl::StrAppend(&out, "    ", doc.name, ")\n      _arguments -s \\\n");
    for (const FlagDoc& flag : doc.flags) absl::StrAppend(&out, "        ", ZshFlag(flag), " \\\n");
    std::string operands = ZshOperands(doc, docs);
    if (doc.max_operands > 1) absl::StrAppend(&operands, " '*:command:_command_names -e'");
    absl::StrAppend(&out, "        '--help[print help]' ", operands, "\n      ;;\n");
  }
  absl::StrAppend(&out, "  esac\n}\n_fleetplan \"$@\"\n");
  return out;
}

}  // namespace fleetplan
