#ifndef FLEETPLAN_TRAINER_LR_SCHEDULE_H_
#define FLEETPLAN_TRAINER_LR_SCHEDULE_H_

// The learning rate over training: the linear scaling rule with gradual
// warm-up (Goyal et al., "Accurate, Large Minibatch SGD"), then cosine decay.
// A function of the step alone, so a resumed run picks it up exactly.

#include <cstdint>

namespace fleetplan::trainer {

struct LrSchedule {
  double base_lr = 0.03;  // per rank: what one rank would train with
  int world_size = 1;     // the peak is base_lr * world_size
  int64_t total_steps = 1;
  int64_t warmup_steps = 0;
};

// The rate for the optimizer step that follows `step` completed steps:
// rising linearly from base_lr to the peak over warmup_steps, then falling
// along a half cosine to zero at total_steps.
double LearningRate(const LrSchedule& schedule, int64_t step);

}  // namespace fleetplan::trainer

#endif  // FLEETPLAN_TRAINER_LR_SCHEDULE_H_
