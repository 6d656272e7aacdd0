#include "tools/apply/preflight_report.h"

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tools/util/ansi_style.h"
#include "tools/util/path_policy.h"

namespace fleetplan {
namespace {

// The table's columns in this order; checks not listed follow.
constexpr absl::string_view kColumnOrder[] = {
    kCheckAgent, kCheckWorkdir, kCheckPython,  kCheckLibraries, kCheckLibtorch,
    kCheckGpus,  kCheckPort,    kCheckConnect, kCheckNccl};

template <typename T>
void Upsert(std::vector<T>& items, T item, absl::string_view key,
            absl::string_view (*key_of)(const T&)) {
  for (T& existing : items) {
    if (key_of(existing) == key) {
      existing = std::move(item);
      return;
    }
  }
  items.push_back(std::move(item));
}

absl::string_view CheckName(const CheckResult& result) { return result.check; }
absl::string_view FactName(const std::pair<std::string, std::string>& fact) {
  return fact.first;
}

// What a fact that must agree across nodes says: `identity` is equal on
// two nodes that agree; `description` is shown.
struct Identity {
  std::string identity;
  std::string description;
};

// A libtorch fact: "<digest> <size> <path>", the digest the agent's XXH3-128
// of the file's content. Described as
// "/usr/lib/libtorch_cpu.so.1.13.0 (LibTorch 1.13.0, xxh3 1f..., 2 bytes)".
Identity LibtorchIdentity(absl::string_view fact) {
  std::vector<std::string> parts = absl::StrSplit(fact, absl::MaxSplits(' ', 2));
  parts.resize(3);
  std::string version;
  std::string name = Basename(parts[2]);
  constexpr absl::string_view kStem = "libtorch_cpu.so.";
  if (absl::StartsWith(name, kStem) && name.size() > kStem.size()) {
    version = absl::StrCat("LibTorch ", name.substr(kStem.size()), ", ");
  }
  return {absl::StrCat(parts[0], " ", parts[1]),
          absl::StrCat(parts[2], " (", version, "xxh3 ", parts[0], ", ", parts[1], " bytes)")};
}

// An interpreter fact: "<version> <path>", described as
// "/usr/bin/python3 (Python 3.11.2)"; the version is what must agree.
Identity InterpreterIdentity(absl::string_view fact) {
  std::vector<std::string> parts = absl::StrSplit(fact, absl::MaxSplits(' ', 1));
  parts.resize(2);
  return {parts[0], absl::StrCat(parts[1], " (Python ", parts[0], ")")};
}

// A check made of one fact per node that must be the same everywhere.
struct Agreement {
  absl::string_view fact;
  absl::string_view check;
  Identity (*identify)(absl::string_view fact);
  absl::string_view verb;      // "load": what the other nodes do with theirs
  absl::string_view expected;  // "the same LibTorch"
  std::string (*fix)(const std::string& node);
};

std::string LibtorchFix(const std::string& node) {
  return absl::StrCat("install that LibTorch on ", node,
                      " too, or point its LD_LIBRARY_PATH at it");
}

std::string InterpreterFix(const std::string& node) {
  return absl::StrCat("install that Python on ", node,
                      ", or activate an environment there that has it ([defaults] python)");
}

std::string NodeList(const std::vector<std::string>& nodes) {
  constexpr size_t kShown = 5;
  std::vector<std::string> shown(nodes.begin(),
                                 nodes.begin() + std::min(nodes.size(), kShown));
  std::string list = absl::StrJoin(shown, ", ");
  if (nodes.size() > kShown) absl::StrAppend(&list, " and ", nodes.size() - kShown, " more");
  return list;
}

std::string Pad(absl::string_view text, size_t width) {
  std::string padded(text);
  padded.resize(std::max(width, text.size()), ' ');
  return padded;
}

// Sets `agreement.check` on every node with its fact: ok where it agrees
// with most nodes, fail elsewhere.
void ConcludeAgreement(const Agreement& agreement, std::vector<NodeChecks>& nodes) {
  // What each node has, and what most nodes have (on a tie, that of the
  // node listed first).
  std::vector<std::pair<NodeChecks*, Identity>> found;
  std::map<std::string, std::vector<std::string>> nodes_by_identity;
  for (NodeChecks& node : nodes) {
    std::string fact = node.Fact(agreement.fact);
    if (fact.empty()) continue;
    found.emplace_back(&node, agreement.identify(fact));
    nodes_by_identity[found.back().second.identity].push_back(node.node);
  }
  if (found.empty()) return;
  const Identity* common = &found.front().second;
  for (const auto& [node, identity] : found) {
    if (nodes_by_identity[identity.identity].size() >
        nodes_by_identity[common->identity].size()) {
      common = &identity;
    }
  }
  const std::vector<std::string>& with_common = nodes_by_identity[common->identity];
  for (const auto& [node, identity] : found) {
    CheckResult result{std::string(agreement.check), CheckStatus::kOk, identity.description};
    if (identity.identity != common->identity) {
      result.status = CheckStatus::kFail;
      result.message = absl::StrCat(identity.description, "; the other nodes (",
                                    NodeList(with_common), ") ", agreement.verb, " ",
                                    common->description,
                                    "; expected ", agreement.expected,
                                    " on every node; fix: ", agreement.fix(node->node));
    } else if (found.size() > 1) {
      absl::StrAppend(&result.message, ", the same on ", with_common.size(), " of ",
                      found.size(), " nodes");
    }
    Upsert(node->checks, result, agreement.check, &CheckName);
  }
}

}  // namespace

const CheckResult* NodeChecks::Find(absl::string_view check) const {
  for (const CheckResult& result : checks) {
    if (result.check == check) return &result;
  }
  return nullptr;
}

std::string NodeChecks::Fact(absl::string_view name) const {
  for (const auto& [fact, value] : facts) {
    if (fact == name) return value;
  }
  return "";
}

PreflightReport::PreflightReport(std::vector<std::string> nodes) {
  for (std::string& node : nodes) nodes_.push_back({std::move(node), {}, {}});
}

NodeChecks* PreflightReport::Node(const std::string& name) {
  for (NodeChecks& node : nodes_) {
    if (node.node == name) return &node;
  }
  nodes_.push_back({name, {}, {}});
  return &nodes_.back();
}

void PreflightReport::Add(const std::string& node, const CheckOutput& output) {
  NodeChecks* checks = Node(node);
  for (const CheckResult& result : output.checks) {
    Upsert(checks->checks, result, result.check, &CheckName);
  }
  for (const auto& fact : output.facts) Upsert(checks->facts, fact, fact.first, &FactName);
}

void PreflightReport::Conclude() {
  ConcludeAgreement({kFactLibtorch, kCheckLibtorch, &LibtorchIdentity, "load",
                     "the same LibTorch", &LibtorchFix},
                    nodes_);
  ConcludeAgreement({kFactInterpreter, kCheckInterpreter, &InterpreterIdentity, "run",
                     "the same Python version", &InterpreterFix},
                    nodes_);
  ConcludeConnect();
}

void PreflightReport::ConcludeConnect() {
  bool listened = std::any_of(nodes_.begin(), nodes_.end(), [](const NodeChecks& node) {
    return !node.Fact(kFactListening).empty();
  });
  if (listened) return;
  // A connection to whatever held the chief's port proves nothing, and one
  // that found nothing listening only repeats the chief's port check.
  for (NodeChecks& node : nodes_) {
    for (CheckResult& result : node.checks) {
      if (result.check != kCheckConnect || result.status == CheckStatus::kSkip) continue;
      result.status = CheckStatus::kSkip;
      result.message = "not tested: no preflight listener ran on the chief (see its port check)";
    }
  }
}

bool PreflightReport::empty() const {
  return std::all_of(nodes_.begin(), nodes_.end(),
                     [](const NodeChecks& node) { return node.checks.empty(); });
}

bool PreflightReport::failed() const {
  for (const NodeChecks& node : nodes_) {
    for (const CheckResult& result : node.checks) {
      if (result.status == CheckStatus::kFail) return true;
    }
  }
  return false;
}

std::string PreflightReport::FailureMessage() const {
  std::vector<std::string> lines;
  for (const NodeChecks& node : nodes_) {
    for (const CheckResult& result : node.checks) {
      if (result.status != CheckStatus::kFail) continue;
      lines.push_back(absl::StrCat("  node '", node.node, "', check ", result.check, ": ",
                                   result.message));
    }
  }
  return absl::StrCat("preflight found ", lines.size(),
                      lines.size() == 1 ? " problem:\n" : " problems:\n",
                      absl::StrJoin(lines, "\n"));
}

std::vector<const NodeChecks*> PreflightReport::Reported() const {
  std::vector<const NodeChecks*> reported;
  for (const NodeChecks& node : nodes_) {
    if (!node.checks.empty()) reported.push_back(&node);
  }
  return reported;
}

std::vector<const NodeChecks*> PreflightReport::NoneRan() const {
  std::vector<const NodeChecks*> none_ran;
  for (const NodeChecks* node : Reported()) {
    bool ran = false;
    for (const CheckResult& result : node->checks) ran |= result.status != CheckStatus::kSkip;
    if (!ran) none_ran.push_back(node);
  }
  return none_ran;
}

namespace {

// The table's columns: the usual checks first, in their order, then any
// other check a node reported; only those some node reported.
std::vector<std::string> TableColumns(const std::vector<const NodeChecks*>& nodes) {
  std::vector<std::string> columns;
  auto add_column = [&](absl::string_view check) {
    if (std::find(columns.begin(), columns.end(), check) != columns.end()) return;
    for (const NodeChecks* node : nodes) {
      if (node->Find(check) != nullptr) {
        columns.emplace_back(check);
        return;
      }
    }
  };
  for (absl::string_view check : kColumnOrder) add_column(check);
  for (const NodeChecks* node : nodes) {
    for (const CheckResult& result : node->checks) add_column(result.check);
  }
  return columns;
}

// What a node's cell of a check's column says.
std::string TableCell(const NodeChecks& node, const std::string& check) {
  const CheckResult* result = node.Find(check);
  if (result == nullptr) return "-";
  switch (result->status) {
    case CheckStatus::kFail:
      return "FAIL";
    case CheckStatus::kSkip:
      return "skip";
    case CheckStatus::kOk:
      break;
  }
  std::string ifname = check == kCheckNccl ? node.Fact(kFactNcclIfname) : "";
  return ifname.empty() ? "ok" : ifname;
}

// A cell padded to `width`, coloured by what it says.
std::string PaintCell(bool color, const std::string& text, size_t width) {
  std::string padded = Pad(text, width);
  if (!color || text == "-") return padded;
  absl::string_view style = text == "FAIL"   ? ansi::kRed
                            : text == "skip" ? ansi::kYellow
                                             : ansi::kGreen;
  return ansi::Styled(true, style, padded);
}

// The failures first, then the notes of skipped checks, a line each.
std::string TableNotes(const std::vector<const NodeChecks*>& nodes, bool color) {
  std::string out;
  for (CheckStatus status : {CheckStatus::kFail, CheckStatus::kSkip}) {
    for (const NodeChecks* node : nodes) {
      for (const CheckResult& result : node->checks) {
        if (result.status != status) continue;
        absl::StrAppend(&out, "  ",
                        PaintCell(color, status == CheckStatus::kFail ? "FAIL" : "skip", 4), " ",
                        node->node, " ", result.check, ": ", result.message, "\n");
      }
    }
  }
  return out;
}

}  // namespace

std::string RenderPreflightTable(const PreflightReport& report, bool color) {
  std::vector<const NodeChecks*> nodes = report.Reported();
  std::vector<std::string> columns = TableColumns(nodes);
  size_t node_width = 4;
  for (const NodeChecks* node : nodes) node_width = std::max(node_width, node->node.size());
  std::vector<size_t> widths;
  std::string out = absl::StrCat("preflight checks\n  ", Pad("node", node_width));
  for (const std::string& column : columns) {
    size_t width = column.size();
    for (const NodeChecks* node : nodes) width = std::max(width, TableCell(*node, column).size());
    widths.push_back(width);
    absl::StrAppend(&out, "  ", Pad(column, column == columns.back() ? 0 : width));
  }
  absl::StrAppend(&out, "\n");
  for (const NodeChecks* node : nodes) {
    std::string row = absl::StrCat("  ", Pad(node->node, node_width));
    for (size_t i = 0; i < columns.size(); ++i) {
      // The last cell unpadded: no trailing blanks.
      absl::StrAppend(&row, "  ",
                      PaintCell(color, TableCell(*node, columns[i]),
                                i + 1 < columns.size() ? widths[i] : 0));
    }
    absl::StrAppend(&out, row, "\n");
  }
  return out + TableNotes(nodes, color);
}

}  // namespace fleetplan
