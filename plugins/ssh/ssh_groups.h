#ifndef FLEETPLAN_PLUGINS_SSH_SSH_GROUPS_H_
#define FLEETPLAN_PLUGINS_SSH_SSH_GROUPS_H_

// The ssh transport's settings: the spec's [ssh.<group>] tables, which
// nodes pick with `ssh = "<group>"`. The parser registered here reads and
// checks them; the spec stores them, opaque, under "ssh".

#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

// A named [ssh.<name>] group: how apply reaches a set of nodes, and the
// environment those nodes' ranks get.
struct SshGroup {
  std::string name;
  std::string user;         // empty: ~/.ssh/config or the local user
  int port = 0;             // 0: ~/.ssh/config or 22
  std::string key_file;     // on the machine that runs apply; "~" unexpanded
  std::string known_hosts;  // empty: ~/.ssh/known_hosts
  EnvList env;              // sorted by name; `$VAR` is expanded on the node
  // How long the connection holder keeps the group's connections after the
  // last command used them (like ControlPersist); zero: no holder.
  absl::Duration persist = kDefaultPersist;

  static constexpr absl::Duration kDefaultPersist = absl::Minutes(10);
};

class SshGroups : public TransportSettings {
 public:
  std::vector<SshGroup> groups;  // in file order

  // The group named `name`, or nullptr.
  const SshGroup* Find(absl::string_view name) const;

  std::vector<std::string> GroupNames() const override;
  EnvList GroupEnv(absl::string_view group) const override;
  std::vector<std::pair<std::string, std::string>> Describe() const override;
};

// The group `node` picks, or nullptr when it picks none or the spec does
// not define it.
const SshGroup* FindSshGroup(const ClusterSpec& spec, const NodeSpec& node);

// The spec's ssh groups as a copy the spec now holds, for code that builds
// specs by hand (tests, benches); empty when the spec has none.
SshGroups& EditSshGroups(ClusterSpec& spec);

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SSH_SSH_GROUPS_H_
