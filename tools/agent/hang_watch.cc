#include "tools/agent/hang_watch.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace fleetplan {

std::string RankStacksPath(const std::string& run_dir, int rank, int generation) {
  return absl::StrCat(run_dir, "/rank-", rank, ".stacks-", generation, ".txt");
}

HangWatch::HangWatch(std::string node, absl::Duration hang_timeout, StackCollectorOptions stacks)
    : node_(std::move(node)),
      hang_timeout_(hang_timeout),
      // Ten samples per timeout, from one a second to one every 5 s: a hang
      // is seen within a tenth of its timeout, at the cost of a few /proc
      // reads per sample.
      interval_(std::clamp(hang_timeout / 10, absl::Seconds(1), absl::Seconds(5))),
      stacks_(std::move(stacks)) {
  if (hang_timeout_ > absl::ZeroDuration()) {
    progress_ = std::make_unique<ProgressWatch>([] { return ReadProcesses(); }, NvidiaSmi(),
                                                sysconf(_SC_CLK_TCK));
  }
}

HangWatch::~HangWatch() = default;  // a collection under way is waited for (its tools time out)

bool HangWatch::ProgressedSince(const RankGroup& ranks, absl::Time now) {
  if (progress_ == nullptr || now < next_sample_) return false;
  next_sample_ = now + interval_;
  std::vector<RankActivity> activity;
  std::vector<uint64_t> output = ranks.output_bytes();
  std::vector<RankState> states = ranks.states();
  for (size_t i = 0; i < states.size(); ++i) {
    if (states[i].pid > 0 && !states[i].status.has_value()) {
      activity.push_back({states[i].rank, states[i].pid, output[i]});
    }
  }
  return progress_->Sample(activity, now);
}

std::string HangWatch::TakeNote() {
  if (progress_ == nullptr || note_said_ || progress_->gpu_note().empty()) return "";
  note_said_ = true;
  return progress_->gpu_note();
}

void HangWatch::StartCollecting(const RankGroup& ranks, const std::string& run_dir,
                                int generation) {
  if (collecting_.valid()) return;
  std::vector<RankTarget> targets;
  for (const RankState& state : ranks.states()) {
    if (state.pid <= 0 || state.status.has_value()) continue;
    targets.push_back({state.rank, state.pid, RankStacksPath(run_dir, state.rank, generation)});
  }
  collecting_generation_ = generation;
  collecting_ = std::async(std::launch::async, [node = node_, targets, options = stacks_] {
    return CollectRankStacks(node, targets, options);
  });
}

std::optional<HangWatch::Collected> HangWatch::TakeCollected() {
  if (!collecting_.valid() ||
      collecting_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    return std::nullopt;
  }
  return Collected{collecting_generation_, collecting_.get()};
}

}  // namespace fleetplan
