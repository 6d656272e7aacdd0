#include "tools/apply/job_control.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tools/apply/output_buffer.h"
#include "tools/apply/parallel_for.h"
#include "tools/util/timed_cancel.h"

namespace fleetplan {
namespace {

// How long `stop` may take on a node: the agent's grace period for its
// ranks (10 s) and a margin.
constexpr absl::Duration kStopTimeout = absl::Seconds(30);
// How long `stacks` may take on a node: the stack tools' own timeouts
// (60 s each, gdb then eu-stack) and a margin.
constexpr absl::Duration kStacksTimeout = absl::Seconds(135);
// How long `top` may take on a node: nvidia-smi's timeout (5 s) and a
// margin.
constexpr absl::Duration kTopTimeout = absl::Seconds(15);

}  // namespace

absl::StatusOr<std::optional<NodeJobState>> JobControl::ReadState(const NodeSpec& node) const {
  absl::StatusOr<std::string> text =
      connections_.at(node.name)->ReadFile(JobStatePath(NodeLogDir(node)));
  if (absl::IsNotFound(text.status())) return std::nullopt;
  if (!text.ok()) return text.status();
  absl::StatusOr<NodeJobState> state = JobStateFromJson(*text);
  if (!state.ok()) return state.status();
  return std::optional<NodeJobState>(*std::move(state));
}

std::vector<absl::StatusOr<std::optional<NodeJobState>>> JobControl::ReadStates() const {
  std::vector<absl::StatusOr<std::optional<NodeJobState>>> states(spec_.nodes.size());
  ParallelFor(spec_.nodes.size(), static_cast<int>(spec_.nodes.size()), [&](size_t i) {
    if (connections_.count(spec_.nodes[i].name) > 0) states[i] = ReadState(spec_.nodes[i]);
  });
  return states;
}

std::optional<NodeJobState> JobControl::ChiefState() const {
  const NodeSpec& chief = spec_.chief();
  if (connections_.count(chief.name) == 0) return std::nullopt;
  absl::StatusOr<std::optional<NodeJobState>> state = ReadState(chief);
  return state.ok() ? *state : std::nullopt;
}

absl::Status JobControl::Stop(
    const std::function<void(const NodeSpec&, absl::string_view)>& on_line) const {
  std::vector<absl::Status> errors(spec_.nodes.size());
  auto stop_node = [&](size_t i) {
    const NodeSpec& node = spec_.nodes[i];
    if (connections_.count(node.name) == 0) return;  // not there: runs nothing
    std::function<void(absl::string_view)> line_callback;
    if (on_line) line_callback = [&](absl::string_view line) { on_line(node, line); };
    // A node with no job, or one that ended, has nothing to stop (and may
    // not even have the agent yet).
    absl::StatusOr<std::optional<NodeJobState>> state = ReadState(node);
    if (state.ok() && (!state->has_value() || IsFinal((*state)->phase))) {
      if (line_callback) {
        line_callback(state->has_value()
                          ? absl::StrCat("nothing running (run ", (*state)->run_id, " ",
                                         JobPhaseName((*state)->phase), ")")
                          : "nothing running (no job here)");
      }
      return;
    }
    OutputBuffer buffer(5, line_callback);
    absl::Notification never;
    TimedCancel timed(&never, kStopTimeout);
    CommandSpec command;
    command.command = StopCommand(node);
    absl::StatusOr<int> status = connections_.at(node.name)->Run(
        command, [&buffer](absl::string_view chunk) { buffer.Append(chunk); }, timed.get());
    buffer.Flush();
    if (!status.ok()) {
      errors[i] = status.status();
    } else if (*status != 0) {
      errors[i] = absl::InternalError(
          absl::StrCat("stop exited with status ", *status, ": ",
                       absl::StripAsciiWhitespace(buffer.Tail())));
    }
  };
  // The chief first: its agent coordinates, so the whole job ends as one
  // stop (every node's ranks, the job recorded as stopped) instead of
  // racing with workers that vanish under it; then whatever is left.
  const size_t chief = &spec_.chief() - spec_.nodes.data();  // chief() is one of nodes
  stop_node(chief);
  ParallelFor(spec_.nodes.size(), static_cast<int>(spec_.nodes.size()), [&](size_t i) {
    if (i != chief) stop_node(i);
  });
  for (size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i].ok()) {
      return absl::Status(errors[i].code(), absl::StrCat("node '", spec_.nodes[i].name, "': ",
                                                         errors[i].message()));
    }
  }
  return absl::OkStatus();
}

std::vector<absl::StatusOr<int>> JobControl::Logs(const LogsRequest& request,
                                                  const std::vector<const NodeSpec*>& nodes,
                                                  const LogsCallbacks& callbacks) const {
  std::vector<absl::StatusOr<int>> results(nodes.size(), absl::UnknownError("not run"));
  ParallelFor(nodes.size(), static_cast<int>(nodes.size()), [&](size_t i) {
    const NodeSpec& node = *nodes[i];
    if (connections_.count(node.name) == 0) {
      results[i] = absl::NotFoundError("not there (apply has not created it), so no logs");
      if (callbacks.on_end) callbacks.on_end(node, results[i]);
      return;
    }
    OutputBuffer buffer(20, [&](absl::string_view line) {
      if (callbacks.on_line) callbacks.on_line(node, line);
    });
    CommandSpec command;
    command.command = LogsCommand(node, request);
    results[i] = connections_.at(node.name)->Run(
        command, [&buffer](absl::string_view chunk) { buffer.Append(chunk); },
        callbacks.cancel_for ? callbacks.cancel_for(node) : nullptr);
    buffer.Flush();
    if (callbacks.on_end) callbacks.on_end(node, results[i]);
  });
  return results;
}

std::vector<absl::StatusOr<std::string>> JobControl::AskAgents(
    const std::function<std::string(const NodeSpec&)>& command_for, absl::string_view what,
    absl::Duration timeout, const absl::Notification* cancel) const {
  std::vector<absl::StatusOr<std::string>> results(spec_.nodes.size(),
                                                   absl::UnknownError("not run"));
  ParallelFor(spec_.nodes.size(), static_cast<int>(spec_.nodes.size()), [&](size_t i) {
    const NodeSpec& node = spec_.nodes[i];
    if (connections_.count(node.name) == 0) {
      results[i] = absl::NotFoundError("not there (apply has not created it)");
      return;
    }
    std::string output;
    TimedCancel timed(cancel, timeout);
    CommandSpec command;
    command.command = command_for(node);
    absl::StatusOr<int> status = connections_.at(node.name)->Run(
        command, [&output](absl::string_view chunk) { output.append(chunk.data(), chunk.size()); },
        timed.get());
    std::string said(absl::StripAsciiWhitespace(output));
    if (!status.ok()) {
      results[i] = status.status();
    } else if (*status != 0) {
      results[i] = absl::InternalError(
          absl::StrCat(what, " exited with status ", *status, ": ", said.substr(0, 500)));
    } else {
      // The agent prints its answer last, on a line of its own.
      size_t newline = said.rfind('\n');
      results[i] = newline == std::string::npos ? said : said.substr(newline + 1);
    }
  });
  return results;
}

std::vector<absl::StatusOr<StacksMessage>> JobControl::Stacks() const {
  std::vector<absl::StatusOr<std::string>> answers =
      AskAgents(StacksCommand, "stacks", kStacksTimeout, nullptr);
  std::vector<absl::StatusOr<StacksMessage>> results;
  for (absl::StatusOr<std::string>& answer : answers) {
    if (!answer.ok()) {
      results.push_back(answer.status());
      continue;
    }
    absl::StatusOr<PeerMessage> message = ParsePeerMessage(*answer);
    if (message.ok() && std::holds_alternative<StacksMessage>(*message)) {
      results.push_back(std::get<StacksMessage>(*std::move(message)));
    } else {
      results.push_back(absl::InternalError(absl::StrCat(
          "the agent's answer is no stacks message: ", answer->substr(0, 200))));
    }
  }
  return results;
}

std::vector<absl::StatusOr<TopReport>> JobControl::Top(const absl::Notification* cancel) const {
  std::vector<absl::StatusOr<std::string>> answers =
      AskAgents(TopCommand, "top", kTopTimeout, cancel);
  std::vector<absl::StatusOr<TopReport>> results;
  for (size_t i = 0; i < answers.size(); ++i) {
    if (!answers[i].ok()) {
      results.push_back(answers[i].status());
      continue;
    }
    absl::StatusOr<TopReport> report = TopReportFromJson(*answers[i]);
    if (report.ok() && report->nodes.size() == 1) {
      report->nodes[0].name = spec_.nodes[i].name;  // a node speaks for itself only
      results.push_back(*std::move(report));
    } else {
      results.push_back(absl::InternalError(absl::StrCat(
          "the agent's answer is no top report: ",
          report.ok() ? "not one node" : report.status().message())));
    }
  }
  return results;
}

}  // namespace fleetplan
