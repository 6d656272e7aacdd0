#include "trainer/rank_launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tools/process/subprocess.h"
#include "tools/util/status_macros.h"

namespace fleetplan::trainer {
namespace {

// Splits complete lines off `pending` into `output`; returns the JSON ones.
std::vector<nlohmann::json> TakeLines(std::string& pending,
                                      RankOutput& output) {
  std::vector<nlohmann::json> parsed;
  size_t newline;
  while ((newline = pending.find('\n')) != std::string::npos) {
    std::string line = pending.substr(0, newline);
    pending.erase(0, newline + 1);
    nlohmann::json json = nlohmann::json::parse(line, nullptr, false);
    if (!line.empty() && line[0] == '{' && !json.is_discarded()) {
      output.lines.push_back(json);
      parsed.push_back(std::move(json));
    } else {
      absl::StrAppend(&output.text, line, "\n");
    }
  }
  return parsed;
}

}  // namespace

std::string TrainBinary() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return absl::StrCat(srcdir != nullptr ? srcdir : ".",
                      "/fleetplan/trainer/train");
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) close(fd);
    return 0;
  }
  close(fd);
  return ntohs(addr.sin_port);
}

absl::StatusOr<std::vector<RankOutput>> LaunchRanks(
    const LaunchOptions& options) {
  std::vector<int> ranks = options.ranks;
  if (ranks.empty()) {
    for (int r = 0; r < options.world_size; ++r) ranks.push_back(r);
  }
  const int port = options.master_port > 0 ? options.master_port : FreePort();
  std::vector<std::unique_ptr<Subprocess>> owned;
  std::vector<Subprocess*> processes;
  for (int rank : ranks) {
    SubprocessOptions spawn;
    spawn.argv = {TrainBinary()};
    spawn.argv.insert(spawn.argv.end(), options.args.begin(),
                      options.args.end());
    if (rank < static_cast<int>(options.rank_args.size())) {
      const std::vector<std::string>& own = options.rank_args[rank];
      spawn.argv.insert(spawn.argv.end(), own.begin(), own.end());
    }
    spawn.env = {{"OMP_NUM_THREADS", "1"}};
    if (options.distributed_env) {
      const std::string ws = absl::StrCat(options.world_size);
      spawn.env.insert(spawn.env.end(),
                       {{"RANK", absl::StrCat(rank)},
                        {"LOCAL_RANK", absl::StrCat(rank)},
                        {"WORLD_SIZE", ws},
                        {"LOCAL_WORLD_SIZE", ws},
                        {"MASTER_ADDR", "127.0.0.1"},
                        {"MASTER_PORT", absl::StrCat(port)}});
    }
    FP_ASSIGN_OR_RETURN(auto process, Subprocess::Start(spawn));
    processes.push_back(process.get());
    owned.push_back(std::move(process));
  }

  std::vector<RankOutput> outputs(ranks.size());
  std::vector<std::string> pending(ranks.size());
  bool killed = false;
  auto on_output = [&](size_t i, absl::string_view chunk) {
    pending[i].append(chunk.data(), chunk.size());
    for (const nlohmann::json& line : TakeLines(pending[i], outputs[i])) {
      if (!killed && options.kill_when && options.kill_when(ranks[i], line)) {
        killed = true;
        for (Subprocess* p : processes) p->SignalGroup(SIGKILL);
      }
    }
  };
  const absl::Time deadline = absl::Now() + options.timeout;
  while (true) {
    bool running = false;
    for (Subprocess* p : processes) {
      running |= p->output_open() || !p->TryWait().has_value();
    }
    if (!running) break;
    if (absl::Now() > deadline) {
      StopAll(processes, absl::Seconds(1), on_output);
      return absl::DeadlineExceededError(absl::StrCat(
          "ranks still running after ", absl::FormatDuration(options.timeout)));
    }
    PumpOutput(processes, {}, absl::Milliseconds(100), on_output);
  }
  for (size_t i = 0; i < processes.size(); ++i) {
    outputs[i].exit_status = *processes[i]->exit_status();
    outputs[i].text += pending[i];
  }
  return outputs;
}

std::vector<nlohmann::json> Events(const RankOutput& output,
                                   const std::string& event) {
  std::vector<nlohmann::json> matching;
  for (const nlohmann::json& line : output.lines) {
    if (line.value("event", "") == event) matching.push_back(line);
  }
  return matching;
}

}  // namespace fleetplan::trainer
