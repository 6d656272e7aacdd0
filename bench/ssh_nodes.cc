#include "bench/ssh_nodes.h"

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "plugins/ssh/ssh_groups.h"

ABSL_FLAG(std::string, nodes, "", "comma-separated host or host:port");
ABSL_FLAG(std::string, user, "", "ssh user");
ABSL_FLAG(std::string, key, "", "private key file");
ABSL_FLAG(std::string, known_hosts, "", "known_hosts file");
ABSL_FLAG(bool, accept_new_host_keys, false, "record first-seen host keys");

namespace fleetplan::bench {

absl::StatusOr<ClusterSpec> SshSpecFromFlags(const std::string& workdir) {
  ClusterSpec spec;
  SshGroup group;
  group.name = "bench";
  group.user = absl::GetFlag(FLAGS_user);
  group.key_file = absl::GetFlag(FLAGS_key);
  group.known_hosts = absl::GetFlag(FLAGS_known_hosts);
  for (absl::string_view entry :
       absl::StrSplit(absl::GetFlag(FLAGS_nodes), ',', absl::SkipEmpty())) {
    std::vector<std::string> host_port = absl::StrSplit(entry, ':');
    NodeSpec node;
    node.name = absl::StrCat("node", spec.nodes.size());
    node.address = host_port[0];
    node.transport = "ssh";
    node.groups["ssh"] = group.name;
    node.workdir = workdir;
    if (host_port.size() > 1) {
      // One group per port keeps the spec model: a group carries the port.
      SshGroup with_port = group;
      with_port.name = std::string(entry);
      if (host_port.size() != 2 || !absl::SimpleAtoi(host_port[1], &with_port.port)) {
        return absl::InvalidArgumentError(absl::StrCat("--nodes: bad host:port `", entry, "`"));
      }
      EditSshGroups(spec).groups.push_back(with_port);
      node.groups["ssh"] = with_port.name;
    }
    spec.nodes.push_back(node);
  }
  if (spec.nodes.empty()) return absl::InvalidArgumentError("--nodes: none given");
  EditSshGroups(spec).groups.push_back(group);
  return spec;
}

TransportOptions SshOptionsFromFlags() {
  TransportOptions options;
  options.accept_new_host_keys = absl::GetFlag(FLAGS_accept_new_host_keys);
  return options;
}

}  // namespace fleetplan::bench
