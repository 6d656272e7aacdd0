#include "tools/plan/render.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "tools/util/ansi_style.h"

namespace fleetplan {
namespace {

using ansi::kBold;
using ansi::kDim;
using ansi::kGreen;
using ansi::kYellow;

class Painter {
 public:
  explicit Painter(bool color) : color_(color) {}
  std::string operator()(absl::string_view style, absl::string_view text) const {
    return ansi::Styled(color_, style, text);
  }

 private:
  bool color_;
};

// The ranks of one node, in plan order.
struct NodeRanks {
  std::string name;
  std::string address;
  int first = 0;
  int last = 0;
};

using RanksIndex = absl::flat_hash_map<absl::string_view, const NodeRanks*>;

std::vector<NodeRanks> RanksByNode(const Plan& plan) {
  std::vector<NodeRanks> nodes;
  for (const RankEnv& rank : plan.ranks) {
    if (nodes.empty() || nodes.back().name != rank.node) {
      nodes.push_back({rank.node, rank.address, rank.rank, rank.rank});
    } else {
      nodes.back().last = rank.rank;
    }
  }
  return nodes;
}

std::string RankRange(int first, int last) {
  if (first == last) return absl::StrCat("rank ", first);
  return absl::StrCat("ranks ", first, "-", last);
}

std::string Input(const Step& step, absl::string_view key) {
  for (const auto& [name, value] : step.inputs) {
    if (name == key) return value;
  }
  return "";
}

// One line saying what `step` will do; `ranks` finds a node's rank range.
std::string Describe(const Step& step, const RanksIndex& ranks) {
  switch (step.kind) {
    case StepKind::kBazelBuild:
      return "bazel build " + Input(step, "targets");
    case StepKind::kEnsureKey:
      return "create ~/.ssh/id_ed25519 if missing, read its public key";
    case StepKind::kAuthorizeKey:
      return absl::StrCat("accept the key of '", Input(step, "from"), "'");
    case StepKind::kSyncTree: {
      if (!SyncsSource(step)) {
        return absl::StrCat("send ", Input(step, "files"), " -> ", Input(step, "destination"));
      }
      std::string line = absl::StrCat("sync ", Input(step, "source"), " -> ",
                                       Input(step, "destination"));
      std::string exclude = Input(step, "exclude");
      if (!exclude.empty()) absl::StrAppend(&line, " (exclude ", exclude, ")");
      return line;
    }
    case StepKind::kWriteEnv: {
      std::string secrets = Input(step, "secrets");
      if (secrets.empty()) return "write " + step.path;
      return absl::StrCat("write ", step.path, " and the secrets file, secrets: ", secrets);
    }
    case StepKind::kCheck:
      return "check " + absl::StrJoin(step.inputs, ", ", absl::PairFormatter("="));
    case StepKind::kLaunchAgent: {
      if (Input(step, "spare") == "true") {
        return "start the agent as a spare: no rank until another node is lost";
      }
      auto it = ranks.find(step.node);
      if (it != ranks.end()) {
        std::string line = absl::StrCat("start ", RankRange(it->second->first, it->second->last));
        std::string elastic = Input(step, "elastic");
        if (!elastic.empty()) absl::StrAppend(&line, " (elastic: ", elastic, ")");
        return line;
      }
      break;
    }
  }
  if (!step.command.empty()) return step.command;
  return step.path;
}

std::string PaintedMarker(Change change, const Painter& paint) {
  std::string marker(1, ChangeMarker(change));
  switch (change) {
    case Change::kAdd:
      return paint(kGreen, marker);
    case Change::kUnchanged:
      return paint(kDim, marker);
    default:
      return paint(kYellow, marker);
  }
}

// `forecast`: one per step of this phase, or null (every step `+`).
void RenderPhase(const Phase& phase, const StepForecast* forecast, const RanksIndex& ranks,
                 size_t node_width, const Painter& paint, std::string* out) {
  absl::StrAppend(out, paint(kBold, PhaseName(phase.kind)));
  if (phase.steps.empty()) {
    absl::StrAppend(out, ": ", paint(kDim, "no changes"), "\n");
    return;
  }
  absl::StrAppend(out, "\n");
  for (size_t i = 0; i < phase.steps.size(); ++i) {
    const Step& step = phase.steps[i];
    std::string node = step.node;
    node.resize(std::max(node.size(), node_width), ' ');
    std::string kind(StepKindName(step.kind));
    kind.resize(std::max<size_t>(kind.size(), 13), ' ');
    Change change = forecast != nullptr ? forecast[i].change : Change::kAdd;
    absl::StrAppend(out, "  ", PaintedMarker(change, paint), " ", node, "  ", kind, "  ",
                    Describe(step, ranks));
    if (forecast != nullptr && !forecast[i].note.empty()) {
      absl::StrAppend(out, paint(kDim, absl::StrCat("  (", forecast[i].note, ")")));
    }
    absl::StrAppend(out, "\n");
  }
}

// The nodes launched as spares: no rank in the plan.
std::vector<std::string> SpareNodes(const Plan& plan) {
  std::vector<std::string> spares;
  const Phase* launch = FindPhase(plan, PhaseKind::kLaunch);
  if (launch == nullptr) return spares;
  for (const Step& step : launch->steps) {
    if (Input(step, "spare") == "true") spares.push_back(step.node);
  }
  return spares;
}

// True when preflight resolves NCCL_SOCKET_IFNAME on the nodes.
bool NcclAuto(const Plan& plan) {
  const Phase* preflight = FindPhase(plan, PhaseKind::kPreflight);
  return preflight != nullptr && !preflight->steps.empty() &&
         Input(preflight->steps.front(), "nccl_socket_ifname") == "auto";
}

}  // namespace

std::string RenderPlanText(const Plan& plan, bool color,
                           const std::vector<StepForecast>* forecast) {
  Painter paint(color);
  std::vector<NodeRanks> ranks = RanksByNode(plan);
  RanksIndex index;
  for (const NodeRanks& node : ranks) index[node.name] = &node;
  size_t node_width = 0;
  size_t steps = 0;
  for (const Phase& phase : plan.phases) {
    steps += phase.steps.size();
    for (const Step& step : phase.steps) {
      node_width = std::max(node_width, step.node.size());
    }
  }
  std::string out = absl::StrCat("fleetplan will perform these steps for '",
                                 plan.spec_name, "' (", plan.spec_path, "):\n\n");
  size_t first = 0;  // of the phase's steps in `forecast`
  for (const Phase& phase : plan.phases) {
    RenderPhase(phase, forecast != nullptr ? forecast->data() + first : nullptr, index,
                node_width, paint, &out);
    first += phase.steps.size();
  }
  absl::StrAppend(&out, "\n", paint(kBold, "ranks"), "\n");
  for (const NodeRanks& node : ranks) {
    absl::StrAppend(&out, "  node '", node.name, "' (", node.address,
                    "): ", RankRange(node.first, node.last), "\n");
  }
  std::vector<std::string> spares = SpareNodes(plan);
  for (const std::string& spare : spares) {
    absl::StrAppend(&out, "  node '", spare, "': spare (no rank until it takes a lost node's "
                                              "place)\n");
  }
  if (NcclAuto(plan)) {
    absl::StrAppend(&out,
                    "  NCCL_SOCKET_IFNAME=auto (resolved per node by preflight: the "
                    "interface that holds the node's private_address, else its address)\n");
  }
  size_t nodes = ranks.size() + spares.size();
  absl::StrAppend(&out, "\n", paint(kBold, "Plan:"), " ", steps,
                  steps == 1 ? " step" : " steps", " on ", nodes,
                  nodes == 1 ? " node, " : " nodes, ", plan.ranks.size(),
                  plan.ranks.size() == 1 ? " rank" : " ranks");
  if (forecast != nullptr) {
    std::map<Change, int> counts;
    for (const StepForecast& step : *forecast) ++counts[step.change];
    absl::StrAppend(&out, ": ", counts[Change::kAdd], " to add, ", counts[Change::kChange],
                    " to change, ", counts[Change::kUnchanged], " unchanged");
    if (counts[Change::kUnknown] > 0) {
      absl::StrAppend(&out, ", ", counts[Change::kUnknown], " decided during apply");
    }
  }
  absl::StrAppend(&out, ".\n");
  return out;
}

std::string RenderForecastJson(const Plan& plan, const std::vector<StepForecast>& forecast) {
  static constexpr const char* kNames[] = {"add", "change", "unchanged", "unknown"};
  nlohmann::json steps = nlohmann::json::array();
  size_t i = 0;
  for (const Phase& phase : plan.phases) {
    for (const Step& step : phase.steps) {
      const StepForecast& one = forecast.at(i++);
      steps.push_back({{"phase", PhaseName(phase.kind)},
                       {"node", step.node},
                       {"kind", StepKindName(step.kind)},
                       {"change", kNames[static_cast<int>(one.change)]},
                       {"note", one.note}});
    }
  }
  nlohmann::json json{
      {"format", "fleetplan-forecast/1"}, {"plan", plan.hash}, {"steps", std::move(steps)}};
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace fleetplan
