#ifndef FLEETPLAN_TOOLS_PROTOCOL_SUPERVISION_H_
#define FLEETPLAN_TOOLS_PROTOCOL_SUPERVISION_H_

// How a node's agent takes part in supervising a job, in the one shape the
// plan makes it (tools/plan/compile.cc), the launch command carries it
// (AgentLaunch, agent_command.h) and the agent and its coordinator use it
// (tools/agent): no part copies it field by field into a shape of its own.

#include <string>
#include <vector>

#include "absl/time/time.h"

namespace fleetplan {

// An elastic job's policy ([job] min_nodes, max_node_losses, rejoin;
// [[nodes]] spare), the coordinator's. At its defaults for a job that
// needs every node.
struct ElasticPolicy {
  std::vector<std::string> spares;  // nodes in reserve: no rank until one is lost
  int min_nodes = 0;                // 0: every node that is no spare
  int max_node_losses = -1;         // -1: any, while min_nodes remain
  std::string rejoin = "restart";   // or "next-failure": when a node that came back joins
};

// The chief's agent coordinates (it lists every node and listens on the
// supervisor port); every other node's connects to it.
struct Supervision {
  std::vector<std::string> nodes;  // the coordinator: every node's name, its own included
  std::string coordinator;         // a worker: the coordinator's HOST:PORT
  int supervisor_port = 0;         // the coordinator's
  absl::Duration heartbeat_timeout = absl::Seconds(30);
  ElasticPolicy elastic;  // the coordinator's policy
  bool rejoins = false;   // a worker of an elastic job: it rejoins a lost coordinator
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_SUPERVISION_H_
