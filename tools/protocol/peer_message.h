#ifndef FLEETPLAN_TOOLS_PROTOCOL_PEER_MESSAGE_H_
#define FLEETPLAN_TOOLS_PROTOCOL_PEER_MESSAGE_H_

// The supervision messages between the launch agents of one job (a
// worker's and the coordinator's, tools/agent/node_agent.h), one JSON
// object per line with its type in "t":
//   worker → coordinator: hello {node, nproc}, started {gen}, ended {gen,
//     statuses, failed, error}, stop, hb, progress {gen} (a rank of the
//     node progressed: hang_timeout), stacks {gen, ranks} (where each rank
//     stands, asked for by collect)
//   coordinator → worker: welcome {run_id, node}, start {gen, why, members},
//     stop {gen}, end {state, exit_status, failure}, hb, collect {gen}
//     (the job hung: report the ranks' stacks)
// Both sides link this one definition; a line from a peer is parsed into
// a typed message or refused, never half read.

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/protocol/job_state.h"
#include "tools/protocol/launcher_contract.h"
#include "tools/protocol/stack_report.h"

namespace fleetplan {

// Rank → exit status (0..255), as "statuses" and "failed" carry them.
using RankStatuses = std::map<int, int>;

struct HelloMessage {  // "hello": a worker's first word (again, to rejoin)
  std::string node;
  int nproc = 1;  // the ranks it runs when it is a generation's member
};
struct StartedMessage {  // "started": the worker's ranks of a generation run
  int generation = 0;
};
struct EndedMessage {  // "ended": the worker's ranks of a generation ended
  int generation = 0;
  RankStatuses statuses;
  RankStatuses failed;
  // What the first of `failed` (the lowest rank) said of its failure.
  std::optional<RankError> error;
};
// "stop": from a worker, a stop asked for there (no generation); from the
// coordinator, stop the ranks of `generation`.
struct StopMessage {
  std::optional<int> generation;
};
struct HeartbeatMessage {};  // "hb"
struct WelcomeMessage {      // "welcome": the coordinator took the worker in
  std::string run_id;
  std::string node;
};
struct StartMessage {  // "start": start the ranks of a generation
  int generation = 0;
  std::string why;  // why a restart; empty for the first start
  // The generation's nodes, in rank order: each places its ranks among them
  // (PlaceAmong in launcher_contract.h); a node not among them runs none.
  // Empty: every node of the plan, placed as env.sh says.
  std::vector<GenerationMember> members;
};
struct EndMessage {  // "end": the job is over
  JobPhase phase = JobPhase::kFailed;
  int exit_status = 1;  // 0..255
  std::optional<JobFailure> failure;
};

struct ProgressMessage {  // "progress": a rank of the worker's progressed
  int generation = 0;
};
struct CollectStacksMessage {  // "collect": the job hung; report the ranks' stacks
  int generation = 0;
};
struct StacksMessage {  // "stacks": where each of the worker's ranks stands
  int generation = 0;
  std::vector<RankStack> ranks;
};

using PeerMessage =
    std::variant<HelloMessage, StartedMessage, EndedMessage, StopMessage, HeartbeatMessage,
                 WelcomeMessage, StartMessage, EndMessage, ProgressMessage, CollectStacksMessage,
                 StacksMessage>;

// The message's "t": "hello", "started", ...
absl::string_view PeerMessageType(const PeerMessage& message);

// One line of JSON, without the newline.
std::string SerializePeerMessage(const PeerMessage& message);

// The message on `line` (without its newline). InvalidArgument, never an
// exception, for a line that is not a JSON object, an unknown "t", a field
// missing or of another type, or a value out of range (a negative
// generation or rank, an exit status outside 0..255, a phase that is no
// job state).
absl::StatusOr<PeerMessage> ParsePeerMessage(absl::string_view line);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_PEER_MESSAGE_H_
