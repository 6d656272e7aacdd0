#ifndef FLEETPLAN_PLUGINS_SLURM_SLURM_SETTINGS_H_
#define FLEETPLAN_PLUGINS_SLURM_SLURM_SETTINGS_H_

// The slurm transport's settings: the spec's [slurm] table. The parser
// registered here reads and checks it; the spec stores it, opaque, under
// "slurm".

#include <string>
#include <utility>
#include <vector>

#include "tools/spec/cluster_spec.h"

namespace fleetplan {

class SlurmSettings : public TransportSettings {
 public:
  std::string partition;           // empty: the cluster's default partition
  int nodes = 0;                   // a count (nodes named "slurm-<i>" until allocated); 0: [[nodes]]
  std::string time;                // sbatch --time; empty: the partition's default
  std::string account;             // sbatch --account; empty: the user's default
  int gpus_per_node = 0;           // sbatch --gpus-per-node; 0: none asked for
  // More allocation options as written ("--qos=high"), given to sbatch:
  // `sbatch = [...]`, or `salloc = [...]` (the same options; the name the
  // key had when allocations were made with salloc).
  std::vector<std::string> sbatch;

  std::vector<std::pair<std::string, std::string>> Describe() const override;
  // "slurm-0" .. "slurm-<nodes-1>": what the plan shows until apply has the
  // allocation's hostnames.
  std::vector<std::string> PlaceholderNodes() const override;
};

// The spec's [slurm] settings; defaults when it has none.
const SlurmSettings& SlurmSettingsOf(const ClusterSpec& spec);

// The name placeholder node `index` has until the allocation is known.
std::string PlaceholderNodeName(int index);

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SLURM_SLURM_SETTINGS_H_
