#ifndef FLEETPLAN_TESTS_FAKE_TRANSPORT_FAKE_TRANSPORT_H_
#define FLEETPLAN_TESTS_FAKE_TRANSPORT_FAKE_TRANSPORT_H_

// A transport that lives outside tools/ and plugins/, to show that adding
// one touches no core file: "fake" runs steps on this machine as the local
// transport does, and reads its own spec tables, [fake.<group>], which
// nodes pick with `fake = "<group>"`:
//
//   [fake.<group>]
//   label = "..."          # required
//   env = { NAME = "..." } # for the ranks of the group's nodes
//
// Linking the library registers both the transport and its settings parser.

#include <string>
#include <utility>
#include <vector>

#include "tools/spec/cluster_spec.h"

namespace fleetplan {

struct FakeGroup {
  std::string name;
  std::string label;
  EnvList env;
};

class FakeSettings : public TransportSettings {
 public:
  std::vector<FakeGroup> groups;  // in file order

  const FakeGroup* Find(absl::string_view name) const;

  std::vector<std::string> GroupNames() const override;
  EnvList GroupEnv(absl::string_view group) const override;
  std::vector<std::pair<std::string, std::string>> Describe() const override;
};

// The labels of the groups of the nodes the fake transport connected to,
// one per connection, in order, since the process started.
std::vector<std::string> FakeConnectedLabels();

}  // namespace fleetplan

#endif  // FLEETPLAN_TESTS_FAKE_TRANSPORT_FAKE_TRANSPORT_H_
