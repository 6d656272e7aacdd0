// train: the data-parallel trainer that fleetplan starts on every node.
// Takes its place in the job from the torchrun environment (RANK,
// WORLD_SIZE, MASTER_ADDR, ...; none set: a single process) and prints
// JSON lines on stdout. Exit status 0 on success, 1 on any error.

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "trainer/allocator.h"
#include "trainer/dist_env.h"
#include "trainer/trainer.h"
#include "tools/util/flags.h"

ABSL_FLAG(std::string, backend, "gloo", "Process group: gloo (CPU) or nccl "
          "(GPU; needs a build with --config=nccl)");
ABSL_FLAG(std::string, dataset, "fashion-mnist", "fashion-mnist or synthetic");
ABSL_FLAG(std::string, data_dir, "",
          "Fashion-MNIST directory (default: the Debian package's, "
          "/usr/share/datasets/fashion-mnist)");
ABSL_FLAG(std::string, arch, "cnn", "cnn, resnet18 or resnet50");
ABSL_FLAG(int, image_size, 0,
          "Synthetic image side (default 28 for cnn, 64 for the ResNets)");
ABSL_FLAG(int64_t, epochs, 2, "Epochs to train");
ABSL_FLAG(int64_t, batch_size, 64,
          "Batch size per rank: the global batch is batch-size * WORLD_SIZE, "
          "also after a resume with another world size");
ABSL_FLAG(double, lr, 0.03,
          "Learning rate per rank; SGD peaks at lr * WORLD_SIZE (linear "
          "scaling: the global batch is batch-size * WORLD_SIZE) after a "
          "warm-up of up to 100 steps, then decays along a cosine to 0");
ABSL_FLAG(double, momentum, 0.9, "SGD momentum");
ABSL_FLAG(uint64_t, seed, 0, "Seed of initialization and shuffling");
ABSL_FLAG(int64_t, steps_per_epoch, 100, "Steps per epoch (synthetic data)");
ABSL_FLAG(int64_t, log_every, 100, "Log a JSON line every N steps");
ABSL_FLAG(int64_t, checkpoint_every, 0, "Checkpoint every N steps (0: never)");
ABSL_FLAG(std::string, checkpoint_dir, "",
          "Checkpoint directory on rank 0's node (the chief): rank 0 alone "
          "writes and reads it, so it need not be shared");
ABSL_FLAG(bool, resume, false,
          "Continue from rank 0's checkpoint in --checkpoint-dir, if there is one, at any "
          "WORLD_SIZE: the rest of the epoch is resharded among the ranks (implied when "
          "TORCHELASTIC_RESTART_COUNT says the job was restarted)");
ABSL_FLAG(int, threads, 0,
          "Intra-op threads per rank (default: OMP_NUM_THREADS, else 1)");
ABSL_FLAG(int, rendezvous_timeout, 60,
          "Seconds to wait for the master and all ranks before failing");
ABSL_FLAG(bool, param_digest, false,
          "Add a digest of all parameters to each JSON line, printed by "
          "every rank (to check that replicas stay identical)");
ABSL_FLAG(int64_t, bucket_cap_mb, 25, "Gradient all-reduce bucket size, MB");

namespace {

int DefaultThreads() {
  int threads = 0;
  const char* omp = std::getenv("OMP_NUM_THREADS");
  return omp != nullptr && absl::SimpleAtoi(omp, &threads) && threads > 0
             ? threads
             : 1;
}

fleetplan::trainer::TrainerOptions OptionsFromFlags() {
  fleetplan::trainer::TrainerOptions o;
  o.backend = absl::GetFlag(FLAGS_backend);
  o.dataset = absl::GetFlag(FLAGS_dataset);
  o.data_dir = absl::GetFlag(FLAGS_data_dir);
  o.arch = absl::GetFlag(FLAGS_arch);
  o.image_size = absl::GetFlag(FLAGS_image_size);
  o.epochs = absl::GetFlag(FLAGS_epochs);
  o.batch_size = absl::GetFlag(FLAGS_batch_size);
  o.lr = absl::GetFlag(FLAGS_lr);
  o.momentum = absl::GetFlag(FLAGS_momentum);
  o.seed = absl::GetFlag(FLAGS_seed);
  o.steps_per_epoch = absl::GetFlag(FLAGS_steps_per_epoch);
  o.log_every = absl::GetFlag(FLAGS_log_every);
  o.checkpoint_every = absl::GetFlag(FLAGS_checkpoint_every);
  o.checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  // A whole-job restart (torchrun's, or fleetplan's next generation)
  // continues from the last checkpoint, as --resume does.
  const char* restart_count = std::getenv("TORCHELASTIC_RESTART_COUNT");
  bool restarted = restart_count != nullptr && std::string(restart_count) != "0" &&
                   std::string(restart_count) != "";
  o.resume = absl::GetFlag(FLAGS_resume) ||
             (restarted && !absl::GetFlag(FLAGS_checkpoint_dir).empty());
  const int threads = absl::GetFlag(FLAGS_threads);
  o.threads = threads > 0 ? threads : DefaultThreads();
  o.rendezvous_timeout = absl::Seconds(absl::GetFlag(FLAGS_rendezvous_timeout));
  o.param_digest = absl::GetFlag(FLAGS_param_digest);
  o.bucket_cap_mb = absl::GetFlag(FLAGS_bucket_cap_mb);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  fleetplan::trainer::KeepFreedMemoryInHeap();
  absl::SetProgramUsageMessage(
      "Data-parallel LibTorch trainer. Ranks come from the torchrun "
      "environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, "
      "MASTER_ADDR, MASTER_PORT); without it, one process trains alone.");
  // Dashed names (--data-dir) as fleetplan's specs write them; exit 2 for
  // an unknown flag, like every binary of this repository.
  absl::StatusOr<std::vector<std::string>> args =
      fleetplan::ParseMainFlags(argc, argv, __FILE__);
  if (!args.ok()) {
    std::cerr << "train: " << args.status().message() << "\n";
    return fleetplan::kExitBadInput;
  }
  if (args->size() > 1) {
    std::cerr << "train: unexpected argument '" << (*args)[1] << "' (see --help)\n";
    return fleetplan::kExitBadInput;
  }
  auto env = fleetplan::trainer::DistEnvFromEnvironment();
  if (!env.ok()) {
    std::cerr << "train: " << env.status().message() << "\n";
    return 1;
  }
  absl::Status status =
      fleetplan::trainer::RunTraining(OptionsFromFlags(), *env, std::cout);
  if (!status.ok()) {
    std::cerr << "train: " << status.message() << "\n";
    return 1;
  }
  return 0;
}
