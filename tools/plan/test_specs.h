#ifndef FLEETPLAN_TOOLS_PLAN_TEST_SPECS_H_
#define FLEETPLAN_TOOLS_PLAN_TEST_SPECS_H_

// Hand-built resolved specs shaped like the seeds, for plan tests.

#include <string>
#include <vector>

#include "tools/spec/cluster_spec.h"

namespace fleetplan {

// A node with workdir /home/ubuntu/project and a venv; nproc ranks.
NodeSpec TestNode(const std::string& name, const std::string& address,
                  int index, int nproc, std::vector<int> gpus = {});

// Two nodes of two GPUs each, like the Lambda seed, with the chief SECOND in
// file order: "worker" (ssh group "lambda-b"), then "head" (chief, private
// address 10.0.0.5, ssh group "lambda" whose env extends LD_LIBRARY_PATH).
// Keys, sync, [env] NCCL_DEBUG=INFO, nccl_socket_ifname "auto", ib = false,
// and job.program //trainer:train.
ClusterSpec TwoByTwoSpec();

// Three local nodes running 1, 2 and 3 ranks with no gpus; a relative
// program path; no keys, no sync, no ssh groups.
ClusterSpec ThreeNodeSpec();

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PLAN_TEST_SPECS_H_
