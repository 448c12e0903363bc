// Learning-rate schedule: linear warmup from lr/warmup to lr over `warmup_steps`, then a cosine
// from lr down to min_lr at step `steps`. Step numbers are 0-based optimiser steps.
#pragma once

#include <cstdint>

namespace afm::train {

double learning_rate_at(int64_t step, double lr, double min_lr, int64_t warmup_steps,
                        int64_t steps);

}  // namespace afm::train
