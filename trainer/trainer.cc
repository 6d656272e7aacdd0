#include "trainer/trainer.h"

#include <torch/torch.h>

#include <exception>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tools/util/status_macros.h"
#include "trainer/checkpoint.h"
#include "trainer/data_parallel.h"
#include "trainer/dataset.h"
#include "trainer/lr_schedule.h"
#include "trainer/metrics.h"
#include "trainer/models.h"
#include "trainer/rendezvous.h"
#include "trainer/rank_zero_resume.h"
#include "trainer/sampler.h"

namespace fleetplan::trainer {
namespace {

// Small enough that evaluation, not training, does not set the peak memory.
constexpr int64_t kEvalChunk = 250;
constexpr int64_t kWarmupSteps = 100;

absl::Status ValidateOptions(const TrainerOptions& o) {
  if (o.epochs < 1 || o.batch_size < 1 || o.log_every < 1 ||
      o.steps_per_epoch < 1 || o.threads < 1 || o.checkpoint_every < 0 ||
      o.bucket_cap_mb < 1) {
    return absl::InvalidArgumentError(
        "--epochs, --batch-size, --log-every, --steps-per-epoch, --threads "
        "and --bucket-cap-mb must be positive; --checkpoint-every >= 0");
  }
  if (o.lr <= 0) return absl::InvalidArgumentError("--lr must be positive");
  if (o.dataset != "fashion-mnist" && o.dataset != "synthetic") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown --dataset=", o.dataset, ": expected fashion-mnist or synthetic"));
  }
  if (o.dataset == "fashion-mnist" && o.arch != "cnn") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--arch=", o.arch, " takes 3-channel images: use --dataset=synthetic "
        "(Fashion-MNIST trains --arch=cnn)"));
  }
  if ((o.checkpoint_every > 0 || o.resume) && o.checkpoint_dir.empty()) {
    return absl::InvalidArgumentError(
        "--checkpoint-every and --resume need --checkpoint-dir");
  }
  return absl::OkStatus();
}

// Everything one rank trains with.
struct Setup {
  Group group;  // empty for a single process
  std::shared_ptr<Classifier> model;
  std::unique_ptr<torch::optim::SGD> optimizer;
  std::unique_ptr<TrainData> train;
  std::optional<LabeledImages> test;
  std::unique_ptr<DataParallel> parallel;
  std::optional<ResumePoint> resumed;  // empty: from the start
};

absl::Status LoadData(const TrainerOptions& o, const DistEnv& env,
                      int image_size, Setup& setup) {
  if (o.dataset == "synthetic") {
    SyntheticOptions synthetic;
    synthetic.batch_size = o.batch_size;
    synthetic.steps_per_epoch = o.steps_per_epoch;
    synthetic.channels = InputChannels(o.arch);
    synthetic.image_size = image_size;
    // Ranks see different images, as they would different shards.
    synthetic.seed = o.seed * 1000003 + env.rank;
    setup.train = MakeSyntheticData(synthetic);
    return absl::OkStatus();
  }
  const std::string dir =
      o.data_dir.empty() ? kDefaultFashionMnistDir : o.data_dir;
  FP_ASSIGN_OR_RETURN(LabeledImages train, LoadFashionMnist(dir, "train"));
  FP_ASSIGN_OR_RETURN(setup.test, LoadFashionMnist(dir, "t10k"));
  ShardOptions shard{env.rank, env.world_size, o.batch_size, o.seed};
  setup.train = MakeShardedData(std::move(train), shard);
  return absl::OkStatus();
}

// Rank 0 alone reads the checkpoint (it lives on the chief) and sends the
// others where to start and its optimizer state; its weights follow with
// DataParallel::Create's broadcast.
absl::Status Resume(const TrainerOptions& o, const DistEnv& env,
                    Setup& setup) {
  const ResumeRun run{o.checkpoint_dir, o.dataset, o.seed,
                      env.rank, env.world_size, o.batch_size};
  FP_ASSIGN_OR_RETURN(
      setup.resumed,
      ResumeFromRankZero(run, setup.group.process_group.get(), *setup.train,
                         *setup.model, *setup.optimizer));
  return absl::OkStatus();
}

absl::StatusOr<Setup> SetUp(const TrainerOptions& o, const DistEnv& env) {
  FP_RETURN_IF_ERROR(ValidateOptions(o));
  FP_ASSIGN_OR_RETURN(Backend backend, ParseBackend(o.backend));
  torch::set_num_threads(o.threads);
  // The same seed everywhere; rank 0's initial weights are broadcast anyway.
  torch::manual_seed(o.seed);
  Setup setup;
  if (env.distributed()) {
    FP_ASSIGN_OR_RETURN(setup.group,
                        Rendezvous(env, backend, o.rendezvous_timeout));
  } else if (backend == Backend::kNccl) {
    // A single process has nothing to all-reduce, but the user asked for
    // NCCL: say so now if this build cannot do it.
    FP_RETURN_IF_ERROR(Rendezvous(env, backend, o.rendezvous_timeout).status());
  }
  const int image_size =
      o.image_size > 0 ? o.image_size : (o.arch == "cnn" ? 28 : 64);
  FP_RETURN_IF_ERROR(LoadData(o, env, image_size, setup));
  FP_ASSIGN_OR_RETURN(setup.model,
                      CreateModel({o.arch, InputChannels(o.arch), image_size,
                                   /*num_classes=*/10}));
  // The rate is set every step from lr_schedule.h.
  setup.optimizer = std::make_unique<torch::optim::SGD>(
      setup.model->parameters(),
      torch::optim::SGDOptions(o.lr).momentum(o.momentum));
  if (o.resume) FP_RETURN_IF_ERROR(Resume(o, env, setup));
  if (setup.group.process_group) {
    FP_ASSIGN_OR_RETURN(setup.parallel,
                        DataParallel::Create(setup.group.process_group,
                                             *setup.model,
                                             o.bucket_cap_mb << 20));
  }
  return setup;
}

// Sums `values` over ranks (a no-op for a single process).
absl::Status SumOverRanks(Setup& setup, std::vector<double>& values) {
  if (!setup.group.process_group) return absl::OkStatus();
  return AllReduceSum(*setup.group.process_group, values);
}

// Test accuracy over the whole test set: each rank classifies its strided
// share, and the counts are summed.
absl::StatusOr<double> Evaluate(Setup& setup, const DistEnv& env) {
  if (setup.parallel) FP_RETURN_IF_ERROR(setup.parallel->SyncBuffers());
  torch::NoGradGuard no_grad;
  setup.model->eval();
  const LabeledImages& test = *setup.test;
  std::vector<int64_t> mine =
      StridedIndices(test.images.size(0), env.rank, env.world_size);
  torch::Tensor indices = torch::tensor(mine, torch::kInt64);
  double correct = 0;
  for (int64_t begin = 0; begin < indices.size(0); begin += kEvalChunk) {
    torch::Tensor chunk = indices.slice(0, begin, begin + kEvalChunk);
    torch::Tensor predicted =
        setup.model->forward(Normalize(test.images.index_select(0, chunk)))
            .argmax(1);
    correct += predicted.eq(test.labels.index_select(0, chunk))
                   .sum()
                   .item<int64_t>();
  }
  setup.model->train();
  std::vector<double> counts = {correct, static_cast<double>(mine.size())};
  FP_RETURN_IF_ERROR(SumOverRanks(setup, counts));
  return counts[0] / counts[1];
}

class Loop {
 public:
  Loop(const TrainerOptions& o, const DistEnv& env, Setup& setup,
       std::ostream& out)
      : o_(o), env_(env), s_(setup), writer_(out) {
    const int64_t total = setup.train->StepsPerEpoch() * o.epochs;
    // Warm-up only where linear scaling raised the rate.
    schedule_ = {o.lr, env.world_size, total,
                 env.world_size > 1 ? std::min<int64_t>(kWarmupSteps, total / 10)
                                    : 0};
  }

  absl::Status Run() {
    const TrainingPosition start =
        s_.resumed ? s_.resumed->start : TrainingPosition{};
    if (s_.resumed) {
      step_ = StepAt(start);
      Write(ResumeRecord(*s_.resumed));
    }
    for (int64_t epoch = start.epoch; epoch < o_.epochs; ++epoch) {
      FP_RETURN_IF_ERROR(
          RunEpoch(epoch, epoch == start.epoch ? start.position : 0));
    }
    std::vector<double> seen = {static_cast<double>(samples_seen_)};
    FP_RETURN_IF_ERROR(SumOverRanks(s_, seen));
    MetricsRecord done = Record("done", o_.epochs - 1);
    done.samples_seen = static_cast<int64_t>(seen[0]);
    done.test_accuracy = last_test_accuracy_;
    done.seconds = absl::ToDoubleSeconds(absl::Now() - started_);
    Write(done);
    return absl::OkStatus();
  }

 private:
  // The step count at `at`, in steps of this world size: the steps it would
  // have taken to get there (a resume with another world size renumbers the
  // steps before it, so the schedule and the epoch's steps stay in line).
  int64_t StepAt(const TrainingPosition& at) const {
    const int64_t per_epoch = s_.train->StepsPerEpoch();
    return at.epoch * per_epoch + per_epoch - s_.train->StepsLeft(at.position);
  }

  // Trains `epoch` from position `start` to its end.
  absl::Status RunEpoch(int64_t epoch, int64_t start) {
    const int64_t steps = s_.train->StepsLeft(start);
    step_ = StepAt({epoch, start});
    for (int64_t taken = 0; taken < steps;) {
      FP_RETURN_IF_ERROR(TrainStep(s_.train->GetBatch(epoch, start, taken)));
      ++taken;
      if (step_ % o_.log_every == 0) FP_RETURN_IF_ERROR(LogInterval(epoch));
      if (taken == steps) FP_RETURN_IF_ERROR(EndEpoch(epoch));
      if (o_.checkpoint_every > 0 && step_ % o_.checkpoint_every == 0) {
        FP_RETURN_IF_ERROR(
            Checkpoint(epoch, s_.train->PositionAfter(start, taken)));
      }
    }
    return absl::OkStatus();
  }

  absl::Status TrainStep(const Batch& batch) {
    try {
      if (s_.parallel) FP_RETURN_IF_ERROR(s_.parallel->BeforeForward());
      s_.optimizer->zero_grad();
      SetLearningRate(LearningRate(schedule_, step_));
      torch::Tensor loss = torch::nn::functional::cross_entropy(
          s_.model->forward(batch.inputs), batch.targets);
      loss.backward();
      if (s_.parallel) FP_RETURN_IF_ERROR(s_.parallel->AfterBackward());
      s_.optimizer->step();
      const int64_t n = batch.inputs.size(0);
      const double loss_sum = loss.item<double>() * n;
      interval_loss_ += loss_sum;
      epoch_loss_ += loss_sum;
      interval_samples_ += n;
      epoch_samples_ += n;
      samples_seen_ += n;
      interval_speed_.Add(n);
      epoch_speed_.Add(n);
    } catch (const std::exception& e) {
      return absl::InternalError(absl::StrCat(
          "rank ", env_.rank, ": training step ", step_ + 1, " failed: ",
          e.what()));
    }
    ++step_;
    return absl::OkStatus();
  }

  void SetLearningRate(double lr) {
    for (auto& group : s_.optimizer->param_groups()) {
      static_cast<torch::optim::SGDOptions&>(group.options()).lr(lr);
    }
  }

  absl::Status LogInterval(int64_t epoch) {
    std::vector<double> sums = {interval_loss_, interval_samples_};
    FP_RETURN_IF_ERROR(SumOverRanks(s_, sums));
    MetricsRecord record = Record("step", epoch);
    record.loss = sums[0] / sums[1];
    record.samples_per_sec = interval_speed_.SamplesPerSec() * env_.world_size;
    Write(record);
    interval_loss_ = interval_samples_ = 0;
    interval_speed_.Reset();
    return absl::OkStatus();
  }

  absl::Status EndEpoch(int64_t epoch) {
    const double samples_per_sec =
        epoch_speed_.SamplesPerSec() * env_.world_size;
    std::vector<double> sums = {epoch_loss_, epoch_samples_};
    FP_RETURN_IF_ERROR(SumOverRanks(s_, sums));
    MetricsRecord record = Record("epoch", epoch);
    record.loss = sums[0] / sums[1];
    record.samples_per_sec = samples_per_sec;
    if (s_.test) {
      FP_ASSIGN_OR_RETURN(record.test_accuracy, Evaluate(s_, env_));
      last_test_accuracy_ = record.test_accuracy;
    }
    Write(record);
    epoch_loss_ = epoch_samples_ = 0;
    epoch_speed_.Reset();
    interval_speed_.Reset();
    return absl::OkStatus();
  }

  // Rank 0 writes the checkpoint (on the chief, which outlives any other
  // node) with the position in the data rather than the step alone, so any
  // world size can resume it.
  absl::Status Checkpoint(int64_t epoch, int64_t position) {
    if (env_.rank != 0) return absl::OkStatus();
    CheckpointInfo info;
    info.at = position == s_.train->EpochLength()
                  ? TrainingPosition{epoch + 1, 0}
                  : TrainingPosition{epoch, position};
    info.step = step_;
    info.world_size = env_.world_size;
    info.batch_size = o_.batch_size;
    info.dataset = o_.dataset;
    info.seed = o_.seed;
    FP_RETURN_IF_ERROR(SaveCheckpoint(o_.checkpoint_dir, info, *s_.model,
                                      *s_.optimizer));
    Write(Record("checkpoint", epoch));
    return absl::OkStatus();
  }

  MetricsRecord ResumeRecord(const ResumePoint& point) const {
    MetricsRecord record = Record("resume", point.start.epoch);
    record.checkpoint_world_size = point.checkpoint_world_size;
    record.checkpoint_step = point.checkpoint_step;
    record.epoch_position = point.start.position;
    return record;
  }

  MetricsRecord Record(const char* event, int64_t epoch) const {
    MetricsRecord record;
    record.event = event;
    record.epoch = epoch;
    record.step = step_;
    record.rank = env_.rank;
    record.world_size = env_.world_size;
    record.epochs = o_.epochs;
    record.steps_per_epoch = s_.train->StepsPerEpoch();
    if (o_.param_digest) record.param_digest = ParameterDigest(*s_.model);
    return record;
  }

  // Rank 0 reports; the others only when they must show their digests.
  void Write(const MetricsRecord& record) {
    if (env_.rank == 0 || o_.param_digest) writer_.Write(record);
  }

  const TrainerOptions& o_;
  const DistEnv& env_;
  Setup& s_;
  MetricsWriter writer_;
  LrSchedule schedule_;
  int64_t step_ = 0;
  double interval_loss_ = 0, epoch_loss_ = 0;
  double interval_samples_ = 0, epoch_samples_ = 0;
  int64_t samples_seen_ = 0;
  Throughput interval_speed_, epoch_speed_;
  std::optional<double> last_test_accuracy_;  // of the last epoch's evaluation
  const absl::Time started_ = absl::Now();
};

}  // namespace

absl::Status RunTraining(const TrainerOptions& options, const DistEnv& env,
                         std::ostream& out) {
  try {
    FP_ASSIGN_OR_RETURN(Setup setup, SetUp(options, env));
    return Loop(options, env, setup, out).Run();
  } catch (const std::exception& e) {
    // LibTorch reports through c10::Error (a std::exception).
    return absl::InternalError(absl::StrCat("rank ", env.rank, ": ", e.what()));
  }
}

}  // namespace fleetplan::trainer
