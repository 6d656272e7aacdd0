#include "plugins/slurm/shared_workdir.h"

#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/util/status_matchers.h"

namespace fleetplan {
namespace {

std::vector<FileToSend> Files() {
  return {{"/src/a", "a", 0644, 1}, {"/src/b", "b", 0755, 2}};
}

// Counts what reaches `put` from `hosts` connections putting the same files;
// `bytes` (may be null) gets what each Put said it sent, in no order.
int FilesSent(bool shared, int hosts, int* probes, std::vector<uint64_t>* bytes = nullptr) {
  SharedWorkdir workdir([&](const std::string&) -> absl::StatusOr<bool> {
    ++*probes;
    return shared;
  });
  absl::Mutex mu;
  int sent = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < hosts; ++i) {
    threads.emplace_back([&] {
      absl::StatusOr<uint64_t> put =
          workdir.Put(Files(), "/shared/job", [&](const std::vector<FileToSend>& files) {
            absl::MutexLock lock(&mu);
            sent += static_cast<int>(files.size());
            return absl::OkStatus();
          });
      ASSERT_THAT(put, IsOk());
      absl::MutexLock lock(&mu);
      if (bytes != nullptr) bytes->push_back(*put);
    });
  }
  for (std::thread& thread : threads) thread.join();
  return sent;
}

// Only the host that put the files says it sent their bytes.
TEST(SharedWorkdirTest, ASharedWorkdirGetsEachFileOnce) {
  int probes = 0;
  std::vector<uint64_t> bytes;
  EXPECT_EQ(FilesSent(/*shared=*/true, 3, &probes, &bytes), 2);
  EXPECT_EQ(probes, 1);
  EXPECT_THAT(bytes, ::testing::UnorderedElementsAre(3u, 0u, 0u));
}

TEST(SharedWorkdirTest, SeparateWorkdirsGetEveryFileEach) {
  int probes = 0;
  std::vector<uint64_t> bytes;
  EXPECT_EQ(FilesSent(/*shared=*/false, 3, &probes, &bytes), 6);
  EXPECT_EQ(probes, 1);
  EXPECT_THAT(bytes, ::testing::UnorderedElementsAre(3u, 3u, 3u));
}

TEST(SharedWorkdirTest, AFailedPutIsTriedAgainByTheNextHost) {
  SharedWorkdir workdir([](const std::string&) -> absl::StatusOr<bool> { return true; });
  EXPECT_THAT(workdir.Put(Files(), "/w", [](const std::vector<FileToSend>&) {
    return absl::UnavailableError("lost");
  }), StatusIs(absl::StatusCode::kUnavailable));
  int sent = 0;
  EXPECT_THAT(workdir.Put(Files(), "/w", [&](const std::vector<FileToSend>& files) {
    sent = static_cast<int>(files.size());
    return absl::OkStatus();
  }), IsOk());
  EXPECT_EQ(sent, 2);
}

TEST(SharedWorkdirTest, AProbeThatFailsFailsThePut) {
  SharedWorkdir workdir([](const std::string&) -> absl::StatusOr<bool> {
    return absl::UnavailableError("srun failed");
  });
  EXPECT_THAT(workdir.Put(Files(), "/w", [](const std::vector<FileToSend>&) {
    return absl::OkStatus();
  }), StatusIs(absl::StatusCode::kUnavailable));
}

}  // namespace
}  // namespace fleetplan
