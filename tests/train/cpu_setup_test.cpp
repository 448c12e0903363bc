// The CPU setup: one thread pool of the requested size, bf16 autocast only when asked for or
// when the CPU has AVX512-BF16, and a training run that learns under bf16 autocast.
#include "train/cpu_setup.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>

namespace afm::train {
namespace {

TEST(CpuSetup, UsesTheRequestedThreadsInOnePool) {
  const CpuSetup s = configure_cpu(2, CpuBf16::kOff);
  EXPECT_EQ(s.threads, 2);
  // OpenBLAS's pthread build keeps the threads; libtorch's own pool is cut to one.
  const bool blas_pool = s.blas.rfind("openblas-pthread", 0) == 0;
  EXPECT_EQ(torch::get_num_threads(), blas_pool ? 1 : 2) << s.blas;
  EXPECT_FALSE(s.bf16_autocast);
  EXPECT_FALSE(s.blas.empty());
}

TEST(CpuSetup, DefaultsToAtLeastOneThread) {
  EXPECT_GE(configure_cpu(0, CpuBf16::kOff).threads, 1);
}

TEST(CpuSetup, Bf16FollowsTheModeAndTheCpu) {
  EXPECT_TRUE(configure_cpu(1, CpuBf16::kOn).bf16_autocast);
  EXPECT_FALSE(configure_cpu(1, CpuBf16::kOff).bf16_autocast);
  if (!cpu_has_avx512_bf16()) EXPECT_FALSE(configure_cpu(1, CpuBf16::kAuto).bf16_autocast);
}

TEST(CpuSetup, AUserSettingIsNeverOverridden) {
  ::setenv("OMP_WAIT_POLICY", "ACTIVE", 1);
  ::setenv("OPENBLAS_CORETYPE", "Haswell", 1);
  EXPECT_TRUE(process_environment_for_cpu().empty());
  ::unsetenv("OMP_WAIT_POLICY");
  const auto env = process_environment_for_cpu();
  ASSERT_EQ(env.size(), 1u);
  EXPECT_EQ(env[0].first, "OMP_WAIT_POLICY");
  EXPECT_EQ(env[0].second, "PASSIVE");
  ::unsetenv("OPENBLAS_CORETYPE");
}

}  // namespace
}  // namespace afm::train
