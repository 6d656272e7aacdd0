// Runs one command on N nodes in parallel through the `ssh` transport, as
// apply's fan-out does: connect, run, report. For bench/ssh_bench.sh.
//
//   ssh_fanout --nodes=127.0.0.1:2201,127.0.0.1:2202 --user=root \
//       --key=/path/key --known_hosts=/path/known_hosts -- true

#include <cstdio>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "plugins/transport.h"

ABSL_FLAG(std::string, nodes, "", "comma-separated host or host:port");
ABSL_FLAG(std::string, user, "", "ssh user");
ABSL_FLAG(std::string, key, "", "private key file");
ABSL_FLAG(std::string, known_hosts, "", "known_hosts file");
ABSL_FLAG(bool, accept_new_host_keys, false, "record first-seen host keys");

int main(int argc, char** argv) {
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  std::string command = absl::StrJoin(args.begin() + 1, args.end(), " ");
  fleetplan::ClusterSpec spec;
  fleetplan::SshGroup group;
  group.name = "bench";
  group.user = absl::GetFlag(FLAGS_user);
  group.key_file = absl::GetFlag(FLAGS_key);
  group.known_hosts = absl::GetFlag(FLAGS_known_hosts);
  for (absl::string_view entry : absl::StrSplit(absl::GetFlag(FLAGS_nodes), ',', absl::SkipEmpty())) {
    std::vector<std::string> host_port = absl::StrSplit(entry, ':');
    fleetplan::NodeSpec node;
    node.name = std::string(entry);
    node.address = host_port[0];
    node.ssh_group = "bench";
    if (host_port.size() > 1) {
      // One group per port keeps the spec model: a group carries the port.
      fleetplan::SshGroup with_port = group;
      with_port.name = std::string(entry);
      if (!absl::SimpleAtoi(host_port[1], &with_port.port)) return 2;
      spec.ssh_groups.push_back(with_port);
      node.ssh_group = with_port.name;
    }
    spec.nodes.push_back(node);
  }
  spec.ssh_groups.push_back(group);
  auto transport = fleetplan::TransportRegistry::Global().Find("ssh");
  if (!transport.ok()) {
    std::fprintf(stderr, "%s\n", transport.status().ToString().c_str());
    return 1;
  }
  fleetplan::TransportOptions options;
  options.accept_new_host_keys = absl::GetFlag(FLAGS_accept_new_host_keys);
  std::vector<std::string> errors(spec.nodes.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    threads.emplace_back([&, i] {
      auto connection = (*transport)->Connect(spec, spec.nodes[i], options);
      if (!connection.ok()) {
        errors[i] = connection.status().ToString();
        return;
      }
      auto exit = (*connection)->Run({command}, [](absl::string_view) {}, nullptr);
      if (!exit.ok()) errors[i] = exit.status().ToString();
      else if (*exit != 0) errors[i] = spec.nodes[i].name + ": exit " + std::to_string(*exit);
    });
  }
  for (std::thread& thread : threads) thread.join();
  int failed = 0;
  for (const std::string& error : errors) {
    if (!error.empty()) std::fprintf(stderr, "%s\n", error.c_str()), ++failed;
  }
  return failed == 0 ? 0 : 1;
}
