#include "hf/tensor_convert.h"

#include <gtest/gtest.h>

namespace afm::hf {
namespace {

// One head of dimension 4: HF rows (r0, r1 | r2, r3) pair r0 with r2 and r1 with r3;
// the interleaved layout puts each pair next to each other: r0, r2, r1, r3.
TEST(TensorConvert, PermutesRotateHalfRowsToAdjacentPairs) {
  std::vector<float> x = {0, 0, 1, 1, 2, 2, 3, 3};  // 4 rows x 2 cols
  std::vector<float> y = permute_rope_rows(x, 4, 2, 1);
  EXPECT_EQ(y, (std::vector<float>{0, 0, 2, 2, 1, 1, 3, 3}));
  std::vector<float> two_heads = {0, 1, 2, 3, 10, 11, 12, 13};  // bias, 2 heads of 4
  EXPECT_EQ(permute_rope_rows(two_heads, 8, 1, 2),
            (std::vector<float>{0, 2, 1, 3, 10, 12, 11, 13}));
}

TEST(TensorConvert, StorageTypePolicy) {
  SafeTensor vec{"n", DType::kF32, {64}, {}, "f"};
  SafeTensor mat{"w", DType::kF32, {8, 64}, {}, "f"};
  SafeTensor odd{"w", DType::kF32, {8, 48}, {}, "f"};
  EXPECT_EQ(storage_type(vec, gguf::TensorType::kQ8_0), gguf::TensorType::kF32);
  EXPECT_EQ(storage_type(mat, gguf::TensorType::kQ4_0), gguf::TensorType::kQ4_0);
  EXPECT_EQ(storage_type(odd, gguf::TensorType::kQ8_0), gguf::TensorType::kF16);
  EXPECT_EQ(storage_type(odd, gguf::TensorType::kBF16), gguf::TensorType::kBF16);
}

}  // namespace
}  // namespace afm::hf
