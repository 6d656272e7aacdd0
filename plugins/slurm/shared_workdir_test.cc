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

// Counts what reaches `put` from `hosts` connections putting the same files.
int FilesSent(bool shared, int hosts, int* probes) {
  SharedWorkdir workdir([&](const std::string&) -> absl::StatusOr<bool> {
    ++*probes;
    return shared;
  });
  absl::Mutex mu;
  int sent = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < hosts; ++i) {
    threads.emplace_back([&] {
      EXPECT_THAT(workdir.Put(Files(), "/shared/job",
                              [&](const std::vector<FileToSend>& files) {
                                absl::MutexLock lock(&mu);
                                sent += static_cast<int>(files.size());
                                return absl::OkStatus();
                              }),
                  IsOk());
    });
  }
  for (std::thread& thread : threads) thread.join();
  return sent;
}

TEST(SharedWorkdirTest, ASharedWorkdirGetsEachFileOnce) {
  int probes = 0;
  EXPECT_EQ(FilesSent(/*shared=*/true, 3, &probes), 2);
  EXPECT_EQ(probes, 1);
}

TEST(SharedWorkdirTest, SeparateWorkdirsGetEveryFileEach) {
  int probes = 0;
  EXPECT_EQ(FilesSent(/*shared=*/false, 3, &probes), 6);
  EXPECT_EQ(probes, 1);
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
