#include "tools/apply/connect_nodes.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::ElementsAre;
using ::testing::Key;

// Each node's connect answers as `answers` says (OK: a connection).
class Answers : public ConnectionFactory {
 public:
  explicit Answers(std::map<std::string, absl::Status> answers) : answers_(std::move(answers)) {}
  absl::StatusOr<std::unique_ptr<Connection>> Connect(const ClusterSpec&, const NodeSpec& node,
                                                      const TransportOptions&) const override {
    const absl::Status& answer = answers_.at(node.name);
    if (!answer.ok()) return answer;
    return std::unique_ptr<Connection>();
  }
  bool RelaysSync(const NodeSpec&) const override { return false; }

 private:
  std::map<std::string, absl::Status> answers_;
};

ClusterSpec Nodes(std::initializer_list<const char*> names) {
  ClusterSpec spec;
  for (const char* name : names) {
    NodeSpec node;
    node.name = name;
    node.transport = "ssh";
    spec.nodes.push_back(node);
  }
  return spec;
}

const Answers kAnswers({{"a", absl::OkStatus()},
                        {"b", absl::UnavailableError("connection timed out")},
                        {"c", absl::NotFoundError("no container yet")},
                        {"d", absl::InvalidArgumentError("no transport 'sshh'")}});

TEST(ConnectNodesTest, ReadingCommandsGoOnWithoutANodeOutOfReach) {
  FP_ASSERT_OK_AND_ASSIGN(
      NodeConnections connections,
      ConnectNodes(kAnswers, Nodes({"a", "b", "c"}), {}, 3, Tolerate::kUnreachable));
  EXPECT_THAT(connections.open, ElementsAre(Key("a")));
  EXPECT_THAT(connections.unreachable, ElementsAre(std::make_pair("b", "connection timed out")));
  EXPECT_THAT(connections.not_there, ElementsAre(std::make_pair("c", "no container yet")));
  // A bad spec is no node out of reach.
  EXPECT_THAT(ConnectNodes(kAnswers, Nodes({"a", "d"}), {}, 2, Tolerate::kUnreachable),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "cannot connect to node 'd' (ssh): no transport 'sshh'"));
}

TEST(ConnectNodesTest, OtherCommandsNameTheFirstNodeThatCannotBeReached) {
  EXPECT_THAT(ConnectNodes(kAnswers, Nodes({"a", "b"}), {}, 2, Tolerate::kNotThere),
              StatusIs(absl::StatusCode::kUnavailable,
                       "cannot connect to node 'b' (ssh): connection timed out"));
  FP_ASSERT_OK_AND_ASSIGN(NodeConnections connections,
                          ConnectNodes(kAnswers, Nodes({"a", "c"}), {}, 2, Tolerate::kNotThere));
  EXPECT_THAT(connections.not_there, ElementsAre(Key("c")));
  EXPECT_THAT(ConnectNodes(kAnswers, Nodes({"a", "c"}), {}, 2, Tolerate::kNothing),
              StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace fleetplan
