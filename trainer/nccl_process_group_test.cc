// The NCCL process group, always compiled with NCCL and the CUDA runtime so
// that every build checks it still compiles and links. Without a CUDA device
// it must refuse with a status that says so; with one, a one-rank group
// must all-reduce and broadcast CPU tensors through the device.

#include "trainer/nccl_process_group.h"

#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/torch.h>

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"
#include "trainer/cuda_device_count.h"

namespace fleetplan::trainer {
namespace {

using ::testing::HasSubstr;

TEST(NcclProcessGroupTest, AvailabilityMatchesTheHost) {
  const absl::Status status = CheckNcclAvailable();
  if (CudaDeviceCount() > 0) {
    EXPECT_THAT(status, IsOk());
  } else {
    EXPECT_THAT(status, StatusIs(absl::StatusCode::kFailedPrecondition,
                                 HasSubstr("needs a CUDA device")));
    EXPECT_THAT(status.message(), HasSubstr("--backend=gloo"));
  }
}

TEST(NcclProcessGroupTest, WithoutADeviceCreationFailsCleanly) {
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "this host has a CUDA device";
  auto store = c10::make_intrusive<c10d::HashStore>();
  auto group = MakeNcclProcessGroup(store, /*rank=*/0, /*world_size=*/1,
                                    /*local_rank=*/0);
  EXPECT_THAT(group, StatusIs(absl::StatusCode::kFailedPrecondition,
                              HasSubstr("needs a CUDA device")));
}

TEST(NcclProcessGroupTest, OneRankAllReducesAndBroadcastsThroughTheDevice) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device on this host";
  auto store = c10::make_intrusive<c10d::HashStore>();
  FP_ASSERT_OK_AND_ASSIGN(auto group,
                          MakeNcclProcessGroup(store, 0, 1, 0));
  EXPECT_EQ(group->getBackendName(), "nccl");

  std::vector<at::Tensor> tensors = {torch::arange(1000, torch::kFloat),
                                     torch::ones({3, 5}, torch::kDouble)};
  const std::vector<at::Tensor> expected = {tensors[0].clone(),
                                            tensors[1].clone()};
  group->allreduce(tensors)->wait();
  EXPECT_TRUE(torch::equal(tensors[0], expected[0]));
  EXPECT_TRUE(torch::equal(tensors[1], expected[1]));

  // A non-contiguous view is staged through a copy and written back.
  at::Tensor matrix = torch::arange(12, torch::kLong).reshape({3, 4});
  std::vector<at::Tensor> view = {matrix.t()};
  group->broadcast(view)->wait();
  EXPECT_TRUE(torch::equal(matrix, torch::arange(12, torch::kLong)
                                       .reshape({3, 4})));
  group->barrier()->wait();
}

}  // namespace
}  // namespace fleetplan::trainer
