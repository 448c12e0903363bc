#include "backend/cuda/cuda_backend.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"

namespace afm {
namespace {

// Runs the kernel where a GPU exists; elsewhere checks that the backend says why it cannot.
TEST(CudaBackend, SaxpyOrACleanUnsupportedError) {
  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30};
  if (cuda::device_count() == 0) {
    EXPECT_THROW(cuda::saxpy(2.0f, x.data(), y.data(), x.size()), Error);
    EXPECT_FALSE(cuda::describe().empty());
    return;
  }
  cuda::saxpy(2.0f, x.data(), y.data(), x.size());
  EXPECT_EQ(y, (std::vector<float>{12, 24, 36}));
}

}  // namespace
}  // namespace afm
