#ifndef FLEETPLAN_TOOLS_APPLY_PREFLIGHT_REPORT_H_
#define FLEETPLAN_TOOLS_APPLY_PREFLIGHT_REPORT_H_

// What the preflight checks found on every node (tools/protocol/check_line.h),
// the conclusions only the whole cluster allows (the same LibTorch on
// every node; connect checks count only where the chief listened), and the
// summary table apply and `plan --check` print.

#include <string>
#include <utility>
#include <vector>

#include "tools/protocol/check_line.h"

namespace fleetplan {

// One node's results, in the order its checks printed them.
struct NodeChecks {
  std::string node;
  std::vector<CheckResult> checks;
  std::vector<std::pair<std::string, std::string>> facts;  // name, value

  // The result of `check`, or nullptr.
  const CheckResult* Find(absl::string_view check) const;
  // The value of fact `name`, or "".
  std::string Fact(absl::string_view name) const;
};

class PreflightReport {
 public:
  // `nodes`: every node of the cluster, in spec order (the table's rows).
  explicit PreflightReport(std::vector<std::string> nodes);

  // Adds what `node`'s checks printed. A check reported again (the workdir,
  // checked before the sync and again in preflight) replaces the earlier
  // result; facts likewise.
  void Add(const std::string& node, const CheckOutput& output);

  // Draws the cluster-wide conclusions, once every node has reported:
  // a `libtorch` check on each node with a libtorch fact (fail where it
  // differs from what most nodes have, naming both), and connect checks
  // turned into skips when no node reported a listener (its port check
  // says why).
  void Conclude();

  // True when any node reported anything.
  bool empty() const;
  bool failed() const;

  // "preflight found N problem(s):" and a line per failed check naming the
  // node and the check, with its message (what was found, what was
  // expected, the fix).
  std::string FailureMessage() const;

  // Nodes that reported, in spec order.
  std::vector<const NodeChecks*> Reported() const;

  // Nodes that reported and where no check ran: every result a skip.
  std::vector<const NodeChecks*> NoneRan() const;

 private:
  NodeChecks* Node(const std::string& name);
  void ConcludeConnect();

  std::vector<NodeChecks> nodes_;
};

// The summary: a row per node that reported, a column per check (ok, FAIL,
// skip, or `-` where the node did not run it; the nccl column shows the
// interface found), then a line per failure and per skip note. ANSI colours
// only when `color`.
std::string RenderPreflightTable(const PreflightReport& report, bool color);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_PREFLIGHT_REPORT_H_
