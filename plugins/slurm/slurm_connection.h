#ifndef FLEETPLAN_PLUGINS_SLURM_SLURM_CONNECTION_H_
#define FLEETPLAN_PLUGINS_SLURM_SLURM_CONNECTION_H_

// A Connection to one host of a Slurm allocation: every command, file read
// and file write is a job step (srun --jobid --nodelist --overlap) run from
// this machine, its stdin and output carried by Slurm. The srun processes
// are children of apply as the local transport runs them, so cancelling a
// step is signalling srun, which signals the task. The exceptions: the
// launch of an agent joins the other nodes' in one job step that outlives
// apply (agent_step.h), and where this machine sees the node's state folder
// (state_here.h), that folder is read and the brief commands run here.

#include <memory>
#include <string>
#include <vector>

#include "plugins/common/local_connection.h"
#include "plugins/slurm/state_snapshot.h"
#include "plugins/slurm/state_step.h"
#include "plugins/transport.h"

namespace fleetplan {

class AgentStep;
class SharedWorkdir;

class SlurmConnection : public Connection {
 public:
  // `shared` (may be null) is the allocation's one record of what was put
  // on a workdir every host sees; it must outlive the connection.
  // `snapshot`: the node's state folder as read already (state_snapshot.h).
  // `agents` (may be null: launches are refused) starts the launch agents
  // together; it must outlive the connection.
  // `agent`: the node's fleetplan-agent, for its launch's waits.
  SlurmConnection(std::string job_id, std::string host, SharedWorkdir* shared,
                  std::optional<StateSnapshot> snapshot = std::nullopt,
                  AgentStep* agents = nullptr, std::string agent = "")
      : job_id_(std::move(job_id)), host_(std::move(host)), shared_(shared),
        agents_(agents), agent_(std::move(agent)), snapshot_(std::move(snapshot)) {}

  // The chief's connection keeps the state step (state_step.h): its
  // snapshots and brief commands go there instead of to steps of their own;
  // the step ends with the connection.
  void KeepStateStep(std::unique_ptr<StateStep> step) { state_step_ = std::move(step); }
  // This machine sees the node's state folder and its workdir's .fleetplan
  // (state_here.h): the folder is read here, and brief commands run here,
  // with no job step.
  void SeeStateHere() { state_here_ = true; }

  absl::StatusOr<int> Run(const CommandSpec& command, const OutputCallback& on_output,
                          const absl::Notification* cancel) override;
  absl::StatusOr<std::string> ReadFile(const std::string& path) override;
  absl::Status WriteFile(const std::string& path, absl::string_view content,
                         uint32_t mode) override;
  // On a shared workdir, a file another host's connection put already is
  // not sent again.
  absl::Status PutFiles(const std::vector<FileToSend>& files,
                        const std::string& remote_root) override;
  absl::StatusOr<uint64_t> PutFilesCounting(const std::vector<FileToSend>& files,
                                            const std::string& remote_root) override;
  absl::Status RemoveFiles(const std::string& remote_root,
                           const std::vector<std::string>& paths) override;

  // Runs `command` on the host with `stdin_file` (a file on this machine;
  // "": none) as its stdin; its exit status, output in `output`. A step
  // that hangs (its node died, and srun waits for Slurm to notice) is
  // stopped after `timeout`: DeadlineExceeded naming the host.
  absl::StatusOr<int> RunWithInput(const std::string& command, const std::string& stdin_file,
                                   std::string* output,
                                   absl::Duration timeout = absl::Seconds(60));
  // RunWithInput with `input` as the command's stdin.
  absl::StatusOr<int> RunWithStdin(const std::string& command, absl::string_view input,
                                   std::string* output,
                                   absl::Duration timeout = absl::Seconds(60));

 private:
  absl::Status WriteNow(const std::string& path, absl::string_view content, uint32_t mode);
  absl::Status PutFilesNow(const std::vector<FileToSend>& files, const std::string& remote_root);
  // `path` from a snapshot of its node-state folder (one step for all the
  // reads of an apply that changes nothing); nullopt when the snapshot does
  // not answer for it.
  std::optional<absl::StatusOr<std::string>> ReadFromSnapshot(const std::string& path);
  // A fresh snapshot of `folder`: from the state step where it is this
  // node's folder, else from a step of its own.
  std::optional<StateSnapshot> ReadSnapshot(const std::string& folder);
  // Whether `command` may go to the state step.
  bool ForStateStep(const CommandSpec& command) const;
  // Whether `command` is brief (transport.h), so that it may run in a
  // shell held open on the node or, where the node's state is seen here,
  // here.
  static bool Brief(const CommandSpec& command);

  std::string job_id_;
  std::string host_;
  SharedWorkdir* shared_;
  AgentStep* agents_;
  std::string agent_;
  LocalConnection local_;
  bool state_here_ = false;
  // Dropped by anything that may change the node's files.
  std::optional<StateSnapshot> snapshot_;
  // Declared last: it ends (the chief's stdin closed) before the rest goes.
  std::unique_ptr<StateStep> state_step_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SLURM_SLURM_CONNECTION_H_
