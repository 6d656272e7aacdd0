#include "tests/apply_harness.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/process/files.h"
#include "tools/process/process_testing.h"
#include "tools/process/subprocess.h"
#include "tools/util/shell_quote.h"

namespace fleetplan {

std::string Runfile(const std::string& path) {
  return absl::StrCat(getenv("TEST_SRCDIR"), "/fleetplan/", path);
}

ToolResult RunTool(const std::vector<std::string>& argv, absl::Duration timeout,
                   const std::vector<std::pair<std::string, std::string>>& env) {
  SubprocessOptions options;
  options.argv = argv;
  options.argv[0] = Runfile(argv[0]);
  options.env = env;
  options.env.emplace_back("RUNFILES_DIR", getenv("TEST_SRCDIR"));
  ToolResult result;
  absl::StatusOr<std::unique_ptr<Subprocess>> child = Subprocess::Start(options);
  if (!child.ok()) {
    result.output = std::string(child.status().message());
    return result;
  }
  Subprocess* processes[] = {child->get()};
  auto append = [&](size_t, absl::string_view chunk) { absl::StrAppend(&result.output, chunk); };
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    PumpOutput(processes, {}, absl::Milliseconds(100), append);
    if ((*child)->TryWait().has_value() && !(*child)->output_open()) break;
  }
  if (!(*child)->TryWait().has_value()) {
    // Timed out: stop it the way a user's Ctrl-C would, so it cleans up.
    StopAll(processes, absl::Seconds(10), append);
    absl::StrAppend(&result.output, "\n[timed out after ", absl::FormatDuration(timeout), "]");
    return result;
  }
  result.status = *(*child)->TryWait();
  return result;
}

absl::StatusOr<std::string> RunScript(const std::string& command) {
  std::string full = absl::StrCat("cd ", getenv("TEST_SRCDIR"), "/fleetplan && ", command);
  FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) return absl::InternalError(absl::StrCat("cannot run ", command));
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  int status = pclose(pipe);
  if (status != 0) {
    return absl::InternalError(absl::StrCat(command, " failed (", status, "): ", out));
  }
  return std::string(absl::StripAsciiWhitespace(out));
}

std::string TomlString(absl::string_view value) {
  return absl::StrCat(
      "\"", absl::StrReplaceAll(value, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}}), "\"");
}

StepEvents FinishedSteps(absl::string_view apply_json_output) {
  StepEvents events;
  for (absl::string_view line : absl::StrSplit(apply_json_output, '\n', absl::SkipEmpty())) {
    nlohmann::json event = nlohmann::json::parse(line, nullptr, false);
    if (!event.is_object() || event["event"] != "step" || event["status"] == "running") {
      continue;
    }
    ++events.finished;
    if (event["status"] != "unchanged") events.changed.emplace_back(line);
  }
  return events;
}

std::vector<nlohmann::json> TrainerEvents(absl::string_view output, absl::string_view kind) {
  std::vector<nlohmann::json> events;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    size_t brace = line.find('{');
    if (brace == absl::string_view::npos) continue;
    nlohmann::json event = nlohmann::json::parse(line.substr(brace), nullptr, false);
    if (event.is_object() && event.value("event", "") == kind) events.push_back(event);
  }
  return events;
}

ToolResult PlanApplyAndExpectTrained(const std::string& spec, int world_size,
                                     const std::string& chief, double min_accuracy) {
  ToolResult plan = RunTool({"tools/fleetplan-plan", "--json", spec});
  EXPECT_EQ(plan.status, 0) << plan.output;
  nlohmann::json json = nlohmann::json::parse(plan.output, nullptr, false);
  EXPECT_EQ(json.is_object() ? json["ranks"].size() : 0u, static_cast<size_t>(world_size))
      << plan.output;

  ToolResult apply = RunTool({"tools/fleetplan-apply", spec}, absl::Minutes(10));
  EXPECT_EQ(apply.status, 0) << apply.output;
  std::vector<nlohmann::json> epochs = TrainerEvents(apply.output, "epoch");
  EXPECT_EQ(epochs.size(), 1u) << apply.output;
  if (!epochs.empty()) {
    EXPECT_EQ(epochs[0]["world_size"], world_size);
    EXPECT_GE(epochs[0].value("test_accuracy", 0.0), min_accuracy) << apply.output;
  }
  EXPECT_THAT(apply.output, ::testing::HasSubstr(absl::StrCat("[", chief, "/0] {")));
  return apply;
}

namespace {

std::vector<std::string> ProcessesMentioningNow(absl::string_view text) {
  std::vector<std::string> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* entry = readdir(proc)) {
    int pid = atoi(entry->d_name);
    if (pid <= 0 || !ProcessRunning(pid)) continue;
    absl::StatusOr<std::string> cmdline = ReadFileToString(absl::StrCat("/proc/", pid, "/cmdline"));
    if (cmdline.ok() && absl::StrContains(*cmdline, text)) {
      found.push_back(
          absl::StrCat(pid, ": ", absl::StrReplaceAll(*cmdline, {{std::string(1, '\0'), " "}})));
    }
  }
  closedir(proc);
  return found;
}

}  // namespace

std::vector<std::string> ProcessesMentioning(absl::string_view text, absl::Duration settle) {
  absl::Time deadline = absl::Now() + settle;
  std::vector<std::string> found = ProcessesMentioningNow(text);
  while (!found.empty() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
    found = ProcessesMentioningNow(text);
  }
  return found;
}

absl::StatusOr<std::string> ContainerExec(absl::string_view container, absl::string_view command) {
  return RunScript(
      absl::StrCat("docker exec ", ShellQuote(container), " sh -c ", ShellQuote(command)));
}

std::vector<std::string> ContainerProcessesMentioning(absl::string_view container,
                                                      absl::string_view text,
                                                      absl::Duration settle) {
  return ContainerProcessesMentioningAny(container, {std::string(text)}, settle);
}

std::vector<std::string> ContainerProcessesMentioningAny(absl::string_view container,
                                                         const std::vector<std::string>& texts,
                                                         absl::Duration settle) {
  absl::Time deadline = absl::Now() + settle;
  while (true) {
    absl::StatusOr<std::string> listing = ContainerExec(container, "ps -eo args");
    if (!listing.ok()) return {std::string(listing.status().message())};
    std::vector<std::string> found;
    for (absl::string_view line : absl::StrSplit(*listing, '\n')) {
      if (std::any_of(texts.begin(), texts.end(),
                      [line](const std::string& text) { return absl::StrContains(line, text); })) {
        found.emplace_back(line);
      }
    }
    if (found.empty() || absl::Now() >= deadline) return found;
    absl::SleepFor(absl::Milliseconds(200));
  }
}

absl::StatusOr<std::vector<TestbedNode>> StartTestbedCluster(int count, absl::string_view prefix) {
  absl::StatusOr<std::string> listing =
      RunScript(absl::StrCat("tests/testbed/cluster.sh up ", count, " ", ShellQuote(prefix)));
  if (!listing.ok()) return listing.status();
  std::vector<TestbedNode> nodes;
  for (absl::string_view line : absl::StrSplit(*listing, '\n', absl::SkipEmpty())) {
    std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() != 3) {
      return absl::InternalError(absl::StrCat("cluster.sh printed an odd line: ", line));
    }
    nodes.push_back({fields[0], fields[1], fields[2]});
  }
  if (static_cast<int>(nodes.size()) != count) {
    return absl::InternalError(
        absl::StrCat("cluster.sh up ", count, " listed ", nodes.size(), " nodes: ", *listing));
  }
  return nodes;
}

absl::Status StopTestbedCluster(absl::string_view prefix) {
  return RunScript(absl::StrCat("tests/testbed/cluster.sh down ", ShellQuote(prefix))).status();
}

absl::StatusOr<std::string> EnsureDockerTestbed() {
  absl::StatusOr<std::string> host = RunScript("tests/testbed/dockerd.sh ensure");
  if (!host.ok()) return host.status();
  setenv("DOCKER_HOST", host->c_str(), 1);
  return RunScript("tests/testbed/node_image.sh");
}

std::string* DockerTestbedTest::image_ = nullptr;

void DockerTestbedTest::SetUpTestSuite() {
  if (image_ != nullptr) return;
  absl::StatusOr<std::string> image = EnsureDockerTestbed();
  ASSERT_TRUE(image.ok()) << image.status();
  image_ = new std::string(*image);
}

std::string* SshTestbedTest::prefix_ = nullptr;
std::vector<TestbedNode>* SshTestbedTest::nodes_ = nullptr;

void SshTestbedTest::StartNodes(int count, const std::string& prefix) {
  absl::StatusOr<std::string> host = RunScript("tests/testbed/dockerd.sh ensure");
  ASSERT_TRUE(host.ok()) << host.status();
  setenv("DOCKER_HOST", host->c_str(), 1);
  prefix_ = new std::string(absl::StrCat(prefix, "-", getpid()));
  absl::StatusOr<std::vector<TestbedNode>> nodes = StartTestbedCluster(count, *prefix_);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  nodes_ = new std::vector<TestbedNode>(*std::move(nodes));
}

void SshTestbedTest::StopNodes() {
  if (prefix_ == nullptr) return;
  absl::Status stopped = StopTestbedCluster(*prefix_);
  EXPECT_TRUE(stopped.ok()) << stopped;
}

absl::StatusOr<std::string> SshTestbedTest::HostKeys() {
  std::string ips;
  for (const TestbedNode& node : Nodes()) absl::StrAppend(&ips, " ", node.ip);
  absl::StatusOr<std::string> keys =
      RunScript(absl::StrCat("ssh-keyscan -T 10", ips, " 2>/dev/null"));
  if (!keys.ok()) return keys.status();
  return *keys + "\n";
}

absl::Status SshTestbedTest::WriteKnownHosts(const std::string& path) {
  absl::StatusOr<std::string> keys = HostKeys();
  if (!keys.ok()) return keys.status();
  return WriteFileAtomic(path, *keys, 0600);
}

}  // namespace fleetplan
