#include "train/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace afm::train {

double learning_rate_at(int64_t step, double lr, double min_lr, int64_t warmup_steps,
                        int64_t steps) {
  if (step < warmup_steps) return lr * static_cast<double>(step + 1) / warmup_steps;
  const int64_t decay_steps = std::max<int64_t>(1, steps - warmup_steps);
  const double progress =
      std::clamp(static_cast<double>(step - warmup_steps) / decay_steps, 0.0, 1.0);
  return min_lr + 0.5 * (lr - min_lr) * (1.0 + std::cos(M_PI * progress));
}

}  // namespace afm::train
