#ifndef FLEETPLAN_TOOLS_PROTOCOL_HOLD_WIRE_H_
#define FLEETPLAN_TOOLS_PROTOCOL_HOLD_WIRE_H_

// What a command says to the connection holder (tools/hold) on its unix
// socket: the apply session's frames (session_wire.h) with three more.
// Each socket connection serves one node:
//
//   command → holder, first:  attach {greeting, node, identity, connect timeout s, accept new 0|1,
//                                     agent path}
//                             → hello {greeting, "agent" | "plain"} | error {status code, message}
//   then the apply session's read, write, put/file/data, remove, run/cancel,
//   each answered as the agent answers it, performed on the holder's
//   connection to the node (by the node's agent at the attach's agent path
//   where one answers, tools/hold/held_node.h; empty: none); where the
//   hello said "agent", also its verify and workdir checks, done by that
//   agent (the command then starts no agent of its own); or, once:
//   open {command}            → the socket carries that command's stream:
//                               data {stdin bytes}... ; output {stdout bytes}...,
//                               status {0, stderr} when it ended
//   quit {greeting, identity} as the first frame → ok: the holder ends.
//
// The identity is the node's HoldKey (plugins/transport.h), or for quit the
// holder's own (HoldIdentity): a holder refuses what was made for another.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/protocol/session_wire.h"

namespace fleetplan {

// 2: the attach names the node's agent; 3: the hello says whether that
// agent serves, and the holder passes it the agent's own checks.
inline constexpr char kHoldGreeting[] = "fleetplan-hold 3";
// The hello's second field.
inline constexpr char kHoldAgentServes[] = "agent";
inline constexpr char kHoldPlain[] = "plain";

struct HoldAttach {
  std::string node;
  std::string identity;
  int connect_timeout_s = 10;
  bool accept_new_host_keys = false;
  std::string agent_path;  // AgentPath(node) (node_layout.h): absolute, or empty
};

std::string EncodeAttach(const HoldAttach& attach);

// InvalidArgument for a frame that is not an attach of this version, or an
// agent path that is not absolute.
absl::StatusOr<HoldAttach> ParseAttach(const Frame& frame);

// An error answer carrying `status` (code and message), and back.
std::string EncodeStatusFrame(const absl::Status& status);
absl::Status ParseStatusFrame(const Frame& frame);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_HOLD_WIRE_H_
