#include "tools/cli/prepare.h"

#include <stdlib.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "plugins/transport.h"
#include "tools/process/files.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

using ::testing::HasSubstr;

// Accepts nodes whose address is not "bad". Its nodes share this machine's
// filesystem when `shared` is true.
class CheckingTransport : public Transport {
 public:
  explicit CheckingTransport(bool shared = true) : shared_(shared) {}
  bool SharesLocalFilesystem() const override { return shared_; }
  absl::Status ValidateNode(const ClusterSpec&, const NodeSpec& node) const override {
    if (node.address == "bad") {
      return absl::InvalidArgumentError(absl::StrCat("node '", node.name, "' is bad"));
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<Connection>> Connect(const ClusterSpec&, const NodeSpec&,
                                                      const TransportOptions&) override {
    return absl::UnimplementedError("not used");
  }

 private:
  bool shared_;
};

class PrepareTest : public ::testing::Test {
 protected:
  PrepareTest() : override_("checking", std::make_unique<CheckingTransport>()) {
    std::string pattern = absl::StrCat(
        getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp", "/prepXXXXXX");
    dir_ = mkdtemp(pattern.data());
    spec_.name = "t";
    spec_.spec_path = dir_ + "/t.toml";
    spec_.job.program = "./run.sh";
    spec_.sync.enabled = true;
    spec_.sync.source = dir_ + "/src";
    spec_.sync.exclude = {"*.pt"};
    NodeSpec& node = spec_.nodes.emplace_back();
    node.name = "a";
    node.address = "a";
    node.transport = "checking";
    node.workdir = dir_ + "/work";
    node.location = {spec_.spec_path, 7, 1};
  }

  TransportRegistry::ScopedOverride override_;
  std::string dir_;
  ClusterSpec spec_;
};

TEST_F(PrepareTest, SourceHashFollowsTheSourcesOnly) {
  ASSERT_THAT(WriteFileAtomic(dir_ + "/src/run.sh", "echo 1\n", 0755), IsOk());
  FP_ASSERT_OK_AND_ASSIGN(Prepared first, PrepareFromSpec(spec_));
  EXPECT_EQ(first.plan.source_hash, first.source.SourceDigest());
  ASSERT_EQ(first.source.entries.size(), 1u);

  ASSERT_THAT(WriteFileAtomic(dir_ + "/src/model.pt", "excluded", 0644), IsOk());
  FP_ASSERT_OK_AND_ASSIGN(Prepared same, PrepareFromSpec(spec_));
  EXPECT_EQ(same.plan.hash, first.plan.hash);

  ASSERT_THAT(WriteFileAtomic(dir_ + "/src/run.sh", "echo 2\n", 0755), IsOk());
  FP_ASSERT_OK_AND_ASSIGN(Prepared changed, PrepareFromSpec(spec_));
  EXPECT_NE(changed.plan.source_hash, first.plan.source_hash);
  EXPECT_NE(changed.plan.hash, first.plan.hash);
}

TEST_F(PrepareTest, UnknownTransportNamesTheNodesLocation) {
  spec_.nodes[0].transport = "checkin";
  EXPECT_THAT(PrepareFromSpec(spec_),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOf(HasSubstr(spec_.spec_path + ":7:1: node 'a'"),
                                        HasSubstr("checking"))));
}

TEST_F(PrepareTest, TransportValidationRuns) {
  spec_.nodes[0].address = "bad";
  EXPECT_THAT(PrepareFromSpec(spec_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("node 'a' is bad")));
}

TEST_F(PrepareTest, WorkdirInsideTheSourceIsRefused) {
  spec_.nodes[0].workdir = dir_ + "/src/run";
  EXPECT_THAT(PrepareFromSpec(spec_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("workdir")));
}

TEST_F(PrepareTest, RemoteWorkdirMayHaveTheSourcesPath) {
  // Seed guides keep the code at the same absolute path on every node,
  // the machine running apply included; on a remote node that is no clash.
  TransportRegistry::ScopedOverride remote("remote",
                                           std::make_unique<CheckingTransport>(false));
  ASSERT_THAT(WriteFileAtomic(dir_ + "/src/run.sh", "echo 1\n", 0755), IsOk());
  spec_.nodes[0].transport = "remote";
  spec_.nodes[0].workdir = dir_ + "/src";
  EXPECT_THAT(PrepareFromSpec(spec_), IsOk());
}

TEST_F(PrepareTest, MissingSourceIsNotFound) {
  EXPECT_THAT(PrepareFromSpec(spec_),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(dir_ + "/src")));
}

}  // namespace
}  // namespace fleetplan
