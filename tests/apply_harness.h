#ifndef FLEETPLAN_TESTS_APPLY_HARNESS_H_
#define FLEETPLAN_TESTS_APPLY_HARNESS_H_

// What the end-to-end tests share: the real plan and apply binaries run
// from runfiles, spec text, the test bed's scripts, and the checks that
// prove an apply did nothing or left nothing running.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace fleetplan {

// Absolute path of a runfile given relative to the workspace root.
std::string Runfile(const std::string& path);

struct ToolResult {
  int status = -1;     // exit status; -1 when it did not start or timed out
  std::string output;  // stdout and stderr, interleaved
};

// Runs a binary of this repository (argv[0] relative to the workspace root,
// e.g. "tools/fleetplan-apply") with `env` added, to the end or `timeout`.
ToolResult RunTool(const std::vector<std::string>& argv,
                   absl::Duration timeout = absl::Seconds(120),
                   const std::vector<std::pair<std::string, std::string>>& env = {});

// `/bin/sh -c command` from the runfiles root; its stdout, trimmed.
// Internal, with the output, when it exits non-zero.
absl::StatusOr<std::string> RunScript(const std::string& command);

// A TOML basic string holding `value`.
std::string TomlString(absl::string_view value);

// The step events of an `apply --json` run that finished (any status but
// "running"), and those among them that did work (not "unchanged").
struct StepEvents {
  int finished = 0;
  std::vector<std::string> changed;  // the event lines
};
StepEvents FinishedSteps(absl::string_view apply_json_output);

// The JSON objects the trainer printed with "event" `kind` ("epoch",
// "step"), found after any prefix on their line (`[node/rank] {...}`).
std::vector<nlohmann::json> TrainerEvents(absl::string_view output, absl::string_view kind);

// Plans `spec` (expecting `world_size` ranks) and applies it with the
// trainer as its job (one epoch); checks, as gtest expectations, that the
// ranks trained together: rank 0 on `chief` printed one epoch line with that
// world size and a test accuracy of at least `min_accuracy`. Returns apply's
// result for further checks.
ToolResult PlanApplyAndExpectTrained(const std::string& spec, int world_size,
                                     const std::string& chief, double min_accuracy);

// Processes on this machine whose command line contains `text`, as
// "pid: command line"; waits up to `settle` for them to go first.
std::vector<std::string> ProcessesMentioning(absl::string_view text,
                                             absl::Duration settle = absl::Seconds(5));

// `command` run by sh in the running container `container`; its stdout,
// trimmed. Internal, with the output, when it exits non-zero.
absl::StatusOr<std::string> ContainerExec(absl::string_view container, absl::string_view command);

// Command lines in `container` that contain `text`; waits up to `settle`
// for them to go first. When the container cannot be asked, one line that
// says so, so that expecting none fails.
std::vector<std::string> ContainerProcessesMentioning(absl::string_view container,
                                                      absl::string_view text,
                                                      absl::Duration settle = absl::Seconds(5));

// The same for command lines that contain any of `texts`, in one look per
// round (one `docker exec`, not one per text).
std::vector<std::string> ContainerProcessesMentioningAny(absl::string_view container,
                                                         const std::vector<std::string>& texts,
                                                         absl::Duration settle = absl::Seconds(5));

// A node of the test bed (tests/testbed/cluster.sh): its container's name,
// its IP on the cluster's network, and the private key that logs in to it.
struct TestbedNode {
  std::string name;
  std::string ip;
  std::string key_file;
};

// Starts `count` sshd nodes named PREFIX-0.. (or finds them running),
// waits until each listens and returns them in order. Needs DOCKER_HOST
// (tests/testbed/dockerd.sh ensure).
absl::StatusOr<std::vector<TestbedNode>> StartTestbedCluster(int count, absl::string_view prefix);

// Removes the nodes, network and key of StartTestbedCluster(_, prefix).
absl::Status StopTestbedCluster(absl::string_view prefix);

// Starts the test bed's Docker daemon unless one answers, points
// DOCKER_HOST at it, builds the node image if needed, and returns the
// image's name.
absl::StatusOr<std::string> EnsureDockerTestbed();

// A suite on the Docker test bed: EnsureDockerTestbed once for the suite;
// each test's SetUp should first check ready().
class DockerTestbedTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static bool ready() { return image_ != nullptr; }
  // The node image's name.
  static const std::string& image() { return *image_; }

 private:
  static std::string* image_;
};

// A suite on sshd nodes of the test bed of its own: the Docker daemon made
// sure of (DOCKER_HOST set), the nodes PREFIX-<pid>-0.. started once for
// the suite and removed after it. The suite's SetUpTestSuite calls
// StartNodes, its TearDownTestSuite StopNodes; each test's SetUp should
// first check ready(). One such suite per test binary.
class SshTestbedTest : public ::testing::Test {
 protected:
  static void StartNodes(int count, const std::string& prefix);
  static void StopNodes();
  static bool ready() { return nodes_ != nullptr; }
  static const std::vector<TestbedNode>& Nodes() { return *nodes_; }
  // The nodes' host keys as OpenSSH's ssh-keyscan reads them (not the code
  // a test checks): a known_hosts file's text.
  static absl::StatusOr<std::string> HostKeys();
  // HostKeys() written to `path` (0600), for a spec's known_hosts.
  static absl::Status WriteKnownHosts(const std::string& path);

 private:
  static std::string* prefix_;
  static std::vector<TestbedNode>* nodes_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TESTS_APPLY_HARNESS_H_
