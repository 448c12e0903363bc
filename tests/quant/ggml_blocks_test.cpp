// afm's decoding of ggml's read-only block types against the `gguf` package's dequantize (the
// oracle; tests/oracle/make_ggml_blocks_fixture.py wrote both the random blocks and the values it
// gives them): bit for bit, through the same GGUF reader and decode_values the runtime uses.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "gguf/reader.h"
#include "quant/tensor_encode.h"

namespace afm::quant {
namespace {

constexpr const char* kFixture = "tests/data/quant/ggml_blocks.gguf";

TEST(GgmlBlocks, DecodingEqualsTheGgufPackageBitForBit) {
  const gguf::File file = gguf::File::open(kFixture);
  int types = 0;
  for (const char* name : {"q4_1", "q5_0", "q5_1", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k"}) {
    const gguf::TensorInfo& blocks = file.get_tensor(std::string("blocks.") + name);
    const gguf::TensorInfo& values = file.get_tensor(std::string("values.") + name);
    ASSERT_EQ(gguf::tensor_type_traits(blocks.type).name, name);
    ASSERT_EQ(values.type, gguf::TensorType::kF32);
    const size_t n = values.n_elements();
    ASSERT_EQ(blocks.n_elements(), n) << name;
    ASSERT_EQ(encoded_bytes(blocks.type, n), blocks.n_bytes) << name;
    std::vector<float> got(n);
    decode_values(blocks.data, n, blocks.type, got.data());
    for (size_t i = 0; i < n; ++i) {
      uint32_t a, b;
      std::memcpy(&a, &got[i], 4);
      std::memcpy(&b, values.data + 4 * i, 4);
      ASSERT_EQ(a, b) << name << " value " << i << ": afm " << got[i] << ", gguf "
                      << reinterpret_cast<const float*>(values.data)[i];
    }
    ++types;
  }
  EXPECT_EQ(types, 8);
}

TEST(GgmlBlocks, TheyAreReadOnlyWithAnErrorNamingTheType) {
  EXPECT_FALSE(can_encode(gguf::TensorType::kQ4_K));
  EXPECT_TRUE(can_encode(gguf::TensorType::kQ4_0));
  const std::vector<float> x(256, 1.0f);
  std::vector<uint8_t> out;
  try {
    encode_tensor(x.data(), x.size(), gguf::TensorType::kQ6_K, out);
    FAIL() << "q6_k was encoded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("q6_k"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace afm::quant
