#include "base/malloc_policy.h"

#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace afm {

void keep_large_allocations_mapped() {
#if defined(__GLIBC__)
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") != nullptr) return;  // the user's choice wins
  constexpr int kThresholdBytes = 128 << 10;  // glibc's initial value
  mallopt(M_MMAP_THRESHOLD, kThresholdBytes);
#endif
}

}  // namespace afm
