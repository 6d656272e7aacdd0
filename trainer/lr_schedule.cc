#include "trainer/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace fleetplan::trainer {

double LearningRate(const LrSchedule& s, int64_t step) {
  const double peak = s.base_lr * s.world_size;
  if (step < s.warmup_steps) {
    const double progress = static_cast<double>(step) / s.warmup_steps;
    return s.base_lr + (peak - s.base_lr) * progress;
  }
  const int64_t decay_steps = std::max<int64_t>(1, s.total_steps - s.warmup_steps);
  const double progress =
      std::min(1.0, static_cast<double>(step - s.warmup_steps) / decay_steps);
  return peak * 0.5 * (1.0 + std::cos(M_PI * progress));
}

}  // namespace fleetplan::trainer
