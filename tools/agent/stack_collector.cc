#include "tools/agent/stack_collector.h"

#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/agent/process_tree.h"
#include "tools/agent/stack_parse.h"
#include "tools/process/files.h"
#include "tools/process/subprocess.h"

namespace fleetplan {
namespace {

// At most this many processes of one rank are looked at (a rank that
// forked data loaders: the rank itself and its first children).
constexpr size_t kMaxProcessesPerRank = 8;
// As many as a rank's entry in the agents' messages may hold.
constexpr size_t kMaxSkipsPerRank = 8;

// What one tool said of one process.
struct ToolRun {
  std::string output;
  std::string skip;  // why it could not look; empty when it did
};

// The last non-empty line of `output`: what a tool that failed said last.
std::string LastLine(absl::string_view output) {
  std::string last;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) last = std::string(line);
  }
  return last.substr(0, 200);
}

ToolRun RunTool(absl::string_view label, std::vector<std::string> argv,
                absl::Duration timeout) {
  SubprocessOptions options;
  options.argv = std::move(argv);
  absl::StatusOr<Completed> done = RunToCompletion(options, timeout);
  if (absl::IsNotFound(done.status())) {
    return {"", absl::StrCat(label, ": ", options.argv[0], " was not found on PATH")};
  }
  if (!done.ok()) return {"", absl::StrCat(label, ": ", done.status().message())};
  if (done->timed_out) {
    return {done->output, absl::StrCat(label, ": ", options.argv[0], " took longer than ",
                                       absl::FormatDuration(timeout))};
  }
  return {done->output, ""};
}

// gdb: "ptrace: Operation not permitted."; eu-stack: "...: Permission denied".
bool RefusedAttach(absl::string_view output) {
  return absl::StrContains(output, "ptrace: Operation not permitted") ||
         absl::StrContains(output, "Permission denied") ||
         absl::StrContains(output, "Operation not permitted");
}

struct ProcessStacks {
  std::vector<ThreadStack> python;
  std::vector<ThreadStack> native;
  std::vector<std::string> skips;
  std::string text;  // for the stacks file
};

void Python(pid_t pid, const StackCollectorOptions& options, ProcessStacks* out) {
  std::vector<std::string> argv = options.gdb;
  // gdb reads every shared library's symbols (LibTorch's take seconds): it
  // needs their unwind tables to walk a stack that waits inside them down to
  // the interpreter's frames.
  for (const char* arg : {"-batch", "-nx", "-p"}) argv.push_back(arg);
  argv.push_back(absl::StrCat(pid));
  argv.push_back("-ex");
  argv.push_back("thread apply all py-bt");
  ToolRun run = RunTool("py-bt", argv, options.tool_timeout);
  absl::StrAppend(&out->text, "--- Python frames of every thread (gdb py-bt) ---\n", run.output,
                  "\n");
  out->python = ParsePyBt(run.output);
  if (!run.skip.empty()) {
    out->skips.push_back(run.skip);
  } else if (out->python.empty() && RefusedAttach(run.output)) {
    out->skips.push_back(absl::StrCat("py-bt: gdb could not attach: ", LastLine(run.output)));
  } else if (absl::StrContains(run.output, "Undefined command: \"py-bt\"")) {
    out->skips.push_back(
        "py-bt: gdb has no py-bt for this interpreter (its -dbg package, e.g. python3.11-dbg, "
        "is not installed)");
  } else if (out->python.empty()) {
    out->skips.push_back(absl::StrCat("py-bt: no Python frames read: ", LastLine(run.output)));
  }
}

void Native(pid_t pid, const StackCollectorOptions& options, ProcessStacks* out) {
  std::vector<std::string> argv = options.eu_stack;
  argv.push_back("-m");
  argv.push_back("-p");
  argv.push_back(absl::StrCat(pid));
  ToolRun run = RunTool("native", argv, options.tool_timeout);
  absl::StrAppend(&out->text, "--- native frames of every thread (eu-stack) ---\n", run.output,
                  "\n");
  out->native = ParseEuStack(run.output);
  if (!run.skip.empty()) {
    out->skips.push_back(run.skip);
  } else if (out->native.empty()) {
    out->skips.push_back(absl::StrCat("native: eu-stack could not read it: ",
                                      LastLine(run.output)));
  }
}

ProcessStacks CollectProcess(pid_t pid, const StackCollectorOptions& options) {
  ProcessStacks stacks;
  std::string exe = ExecutableName(pid);
  stacks.text = absl::StrCat("=== process ", pid, " (", exe.empty() ? "?" : exe, ") ===\n");
  if (absl::StartsWith(exe, "python")) Python(pid, options, &stacks);
  Native(pid, options, &stacks);
  return stacks;
}

RankStack CollectRank(const std::string& node, const RankTarget& target,
                      const std::vector<ProcessInfo>& all, const StackCollectorOptions& options) {
  RankStack rank;
  rank.rank = target.rank;
  rank.node = node;
  std::vector<ProcessInfo> tree = ProcessTree(all, target.pid);
  if (tree.empty()) {
    rank.skips.push_back(absl::StrCat("its process ", target.pid, " is gone"));
    return rank;
  }
  if (tree.size() > kMaxProcessesPerRank) tree.resize(kMaxProcessesPerRank);
  std::string text;
  for (const ProcessInfo& process : tree) {
    ProcessStacks stacks = CollectProcess(process.pid, options);
    absl::StrAppend(&text, stacks.text);
    if (!rank.where.has_value()) {
      rank.where = InnermostUserFrame(process.pid, stacks.python, stacks.native);
    }
    for (std::string& skip : stacks.skips) {
      bool seen = false;
      for (const std::string& each : rank.skips) seen |= each == skip;
      if (!seen) rank.skips.push_back(std::move(skip));
    }
  }
  if (rank.skips.size() > kMaxSkipsPerRank) rank.skips.resize(kMaxSkipsPerRank);
  if (!target.stacks_path.empty()) {
    absl::Status written = WriteFileAtomic(target.stacks_path, text, 0600);
    if (!written.ok()) rank.skips.push_back(absl::StrCat("file: ", written.message()));
  }
  return rank;
}

}  // namespace

std::vector<RankStack> CollectRankStacks(const std::string& node,
                                         const std::vector<RankTarget>& ranks,
                                         const StackCollectorOptions& options) {
  std::vector<ProcessInfo> all = ReadProcesses();
  std::vector<RankStack> stacks(ranks.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ranks.size(); ++i) {
    threads.emplace_back([&, i] { stacks[i] = CollectRank(node, ranks[i], all, options); });
  }
  for (std::thread& thread : threads) thread.join();
  return stacks;
}

}  // namespace fleetplan
