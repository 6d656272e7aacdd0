#ifndef FLEETPLAN_PLUGINS_SLURM_STATE_STEP_H_
#define FLEETPLAN_PLUGINS_SLURM_STATE_STEP_H_

// The one job step an apply that changes nothing costs. Every srun pays a
// step's round trip through slurmctld and slurmd (a quarter of a second on
// a busy test bed); the apply lock alone (take, read, give back: state_lock.h)
// would be three more steps on the chief. So the first connection starts
// this step over every host of the spec: each host prints its node-state
// folder (EveryHostSnapshotCommand's lines), and each but the chief ends;
// the chief's task stays, reading requests on its stdin, one a line, for
// as long as apply holds its connection: "@snapshot" reads its folder again
// and answers "@same" when it reads as first printed, else prints it the
// same way; any other line is a base64 sh command (a brief one: the lock's)
// whose output and exit status come back in base64 lines. Closing stdin
// ends the step. What breaks the step (a node lost, garbled lines) is an
// error of the request that saw it; later requests go to job steps of
// their own.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "plugins/slurm/state_snapshot.h"
#include "tools/process/subprocess.h"

namespace fleetplan {

// The step's sh command: `folders` maps every host to its state folder;
// `chief` (one of them) serves requests.
std::string StateStepCommand(const std::map<std::string, std::string>& folders,
                             const std::string& chief);

// One output line of the step's srun (--label): the task's label and what
// it printed.
struct LabeledLine {
  std::string task;
  std::string text;
};

// A request's answer, from the base64 the chief printed between "@run" and
// "@done": the command's output and exit status. InvalidArgument when the
// lines are not such an answer.
absl::StatusOr<std::pair<int, std::string>> ParseRunAnswer(const std::string& base64);

class StateStep {
 public:
  // Starts the step over the hosts of `folders` (job `job_id`), `chief`
  // among them, and waits (up to `wait`) for every host's folder.
  static absl::StatusOr<std::unique_ptr<StateStep>> Start(
      const std::string& job_id, const std::map<std::string, std::string>& folders,
      const std::string& chief, absl::Duration wait);
  // Closes the chief's stdin and waits a few seconds for the step to end.
  ~StateStep();

  // The other hosts' snapshots, by host (those that came whole), once.
  std::map<std::string, StateSnapshot> TakeOtherSnapshots() { return std::move(others_); }

  // The chief's folder as it is now; nullopt when the step cannot say
  // (broken, or its lines did not parse).
  std::optional<StateSnapshot> Snapshot();
  // Runs `command` on the chief: its exit status, its output in `*output`.
  // Unavailable when the step is broken or breaks.
  absl::StatusOr<int> Run(const std::string& command, std::string* output, absl::Duration timeout);
  bool usable() const { return !broken_; }

 private:
  StateStep(std::unique_ptr<Subprocess> srun, std::map<std::string, std::string> folders,
            std::string chief)
      : srun_(std::move(srun)), folders_(std::move(folders)), chief_(std::move(chief)) {}
  // The next line the chief's task printed; other tasks' lines go to their
  // snapshots meanwhile. Unavailable when the step ended or `deadline` passed.
  absl::StatusOr<std::string> ChiefLine(absl::Time deadline);
  // The next line of any task, pumping srun's output until `deadline`.
  absl::StatusOr<LabeledLine> NextLine(absl::Time deadline);
  // Sends one request line; the chief's lines up to `last` (exclusive),
  // after `first`; or `short_answer` alone when the chief answered that.
  absl::StatusOr<std::vector<std::string>> Ask(const std::string& request, const std::string& first,
                                               const std::string& last, absl::Duration timeout,
                                               const std::string& short_answer = "");
  // Files a line of a host's folder (another host's, or the chief's first).
  void FileFolderLine(const LabeledLine& line);

  std::unique_ptr<Subprocess> srun_;
  std::map<std::string, std::string> folders_;
  std::string chief_;
  std::string chief_task_;           // the chief's label, once it said "@chief"
  std::string pending_;              // output not yet a whole line
  std::vector<LabeledLine> lines_;   // whole lines not yet taken
  std::string folders_output_;       // the hosts' folders' lines, as srun printed them
  int folders_ended_ = 0;
  std::map<std::string, StateSnapshot> others_;
  // The chief's folder as it printed it first; its "@same" means this.
  std::optional<StateSnapshot> chief_first_;
  bool broken_ = false;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SLURM_STATE_STEP_H_
