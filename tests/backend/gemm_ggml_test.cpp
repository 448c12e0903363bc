// The kernels of ggml's read-only block types (backend/cpu/gemm.h, GgmlBlockKernels):
// - the scalar references (32-value activation blocks, and 256-value ones for the K-quants of
//   sets with super_block_activations) equal the dot product of the decoded weights
//   (quant/tensor_encode's decode_values, itself bit-equal to the `gguf` package:
//   tests/quant/ggml_blocks_test.cpp) with the decoded activations;
// - every SIMD set matches the scalar one on ragged shapes (rows and tokens off the register
//   tile, one to five super-blocks; 16+ rows with 4+ tokens take the packed batch path);
// - each token's outputs are bit-identical whatever else is in the call (continuous batching
//   relies on it).
// Weights are random bytes with finite f16 scales, as in the fixture.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/gemm.h"
#include "base/half.h"
#include "gguf/types.h"
#include "quant/tensor_encode.h"

namespace afm::cpu {
namespace {

using gguf::TensorType;

struct TypeCase {
  TensorType type;
  bool k_quant;  // takes ActBlock256 rows in sets with super_block_activations
  GemmKernel GgmlBlockKernels::*kernel;
  std::vector<int> f16_fields;  // byte offsets of the block's f16 scales
};

const std::vector<TypeCase>& cases() {
  static const std::vector<TypeCase> all{
      {TensorType::kQ4_1, false, &GgmlBlockKernels::q4_1, {0, 2}},
      {TensorType::kQ5_0, false, &GgmlBlockKernels::q5_0, {0}},
      {TensorType::kQ5_1, false, &GgmlBlockKernels::q5_1, {0, 2}},
      {TensorType::kQ2_K, true, &GgmlBlockKernels::q2_k, {80, 82}},
      {TensorType::kQ3_K, true, &GgmlBlockKernels::q3_k, {108}},
      {TensorType::kQ4_K, true, &GgmlBlockKernels::q4_k, {0, 2}},
      {TensorType::kQ5_K, true, &GgmlBlockKernels::q5_k, {0, 2}},
      {TensorType::kQ6_K, true, &GgmlBlockKernels::q6_k, {208}},
  };
  return all;
}

struct GgmlProblem {
  int64_t rows, tokens, k;
  size_t row_bytes;
  std::vector<uint8_t> w;
  std::vector<ActBlock> x;
  std::vector<ActBlock256> x256;  // the same activations in 256-value blocks
};

GgmlProblem make_ggml_problem(const TypeCase& tc, int64_t rows, int64_t tokens, int64_t k,
                              uint32_t seed) {
  std::mt19937 rng(seed);
  const auto traits = gguf::tensor_type_traits(tc.type);
  GgmlProblem p{rows, tokens, k, quant::encoded_bytes(tc.type, k), {}, {}};
  p.w.resize(rows * p.row_bytes);
  for (uint8_t& b : p.w) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> exponent(-9.0f, -4.0f);
  for (size_t blk = 0; blk < p.w.size() / traits.block_bytes; ++blk) {
    for (int off : tc.f16_fields) {
      const float v = std::exp2(exponent(rng)) * (rng() % 2 ? 1.0f : -1.0f);
      const uint16_t h = f32_to_f16(v);
      std::memcpy(&p.w[blk * traits.block_bytes + off], &h, 2);
    }
  }
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> xf(k);
  p.x.resize(tokens * k / 32);
  p.x256.resize(tokens * k / 256);
  for (int64_t t = 0; t < tokens; ++t) {
    for (float& v : xf) v = dist(rng);
    quantize_activations(xf.data(), &p.x[t * k / 32], k);
    quantize_activations_256(xf.data(), &p.x256[t * k / 256], k);
  }
  return p;
}

// The kernel tc names in set ks, on the activations it takes.
struct Bound {
  GemmKernel kernel;
  bool blocks_256;
};

Bound bind(const GgmlBlockKernels& ks, const TypeCase& tc) {
  return {ks.*tc.kernel, tc.k_quant && ks.super_block_activations};
}

std::vector<float> run_ggml(Bound b, const GgmlProblem& p, int64_t first_token, int64_t tokens) {
  std::vector<float> y(tokens * p.rows, NAN);
  if (b.blocks_256) {
    b.kernel(p.w.data(), p.row_bytes, p.rows, &p.x256[first_token * p.k / 256],
             p.k / 256 * sizeof(ActBlock256), tokens, p.k, y.data(), p.rows);
  } else {
    b.kernel(p.w.data(), p.row_bytes, p.rows, &p.x[first_token * p.k / 32],
             p.k / 32 * sizeof(ActBlock), tokens, p.k, y.data(), p.rows);
  }
  return y;
}

// Activation i of token t as the kernel sees it: d_a x q.
double activation(const GgmlProblem& p, bool blocks_256, int64_t t, int64_t i) {
  if (blocks_256) {
    const ActBlock256& a = p.x256[t * p.k / 256 + i / 256];
    return static_cast<double>(a.q[i % 256]) * a.d;
  }
  const ActBlock& a = p.x[t * p.k / 32 + i / 32];
  return static_cast<double>(a.q[i % 32]) * a.d;
}

std::string name_of(TensorType t) { return std::string(gguf::tensor_type_traits(t).name); }

TEST(GgmlGemm, ScalarEqualsTheDotOfDecodedValues) {
  for (const GgmlBlockKernels* ks : {&scalar_ggml_block_kernels(), &scalar_ggml_super_block_kernels()}) {
    for (const TypeCase& tc : cases()) {
      const GgmlProblem p = make_ggml_problem(tc, 3, 2, 512, 11);
      const Bound b = bind(*ks, tc);
      const std::vector<float> got = run_ggml(b, p, 0, p.tokens);
      std::vector<float> w(p.k);
      for (int64_t r = 0; r < p.rows; ++r) {
        quant::decode_values(&p.w[r * p.row_bytes], p.k, tc.type, w.data());
        for (int64_t t = 0; t < p.tokens; ++t) {
          double want = 0, scale = 0;
          for (int64_t i = 0; i < p.k; ++i) {
            const double product = static_cast<double>(w[i]) * activation(p, b.blocks_256, t, i);
            want += product;
            scale += std::fabs(product);
          }
          EXPECT_NEAR(got[t * p.rows + r], want, 1e-5 * scale + 1e-6)
              << name_of(tc.type) << (b.blocks_256 ? " (256-value blocks)" : "") << " row " << r
              << " token " << t;
        }
      }
    }
  }
}

// The 256-value blocks: the same rounding rule as the 32-value ones, and the sums of each 16.
TEST(GgmlGemm, SuperBlockActivationsKeepTheirSums) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  std::vector<float> x(512);
  for (float& v : x) v = dist(rng);
  x[300] = 40.0f;  // one outlier sets its block's scale
  std::vector<ActBlock256> blocks(2);
  quantize_activations_256(x.data(), blocks.data(), 512);
  for (int b = 0; b < 2; ++b) {
    float amax = 0;
    for (int i = 0; i < 256; ++i) amax = std::max(amax, std::fabs(x[256 * b + i]));
    EXPECT_EQ(blocks[b].d, amax / 127.0f);
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += blocks[b].q[16 * g + i];
      EXPECT_EQ(blocks[b].sums[g], sum);
    }
    for (int i = 0; i < 256; ++i) {
      EXPECT_EQ(blocks[b].q[i], static_cast<int>(std::nearbyint(x[256 * b + i] * (1.0f / blocks[b].d))));
    }
  }
  EXPECT_EQ(blocks[1].q[300 - 256], 127);
}

void expect_matches_scalar(const GemmKernels& ks) {
  for (const TypeCase& tc : cases()) {
    for (int64_t rows : {1, 3, 4, 9, 16, 35}) {
      for (int64_t tokens : {1, 2, 5, 8}) {
        for (int64_t k : {256, 512, 1280, 2304}) {
          const GgmlProblem p = make_ggml_problem(
              tc, rows, tokens, k, static_cast<uint32_t>(rows * 100 + tokens * 10 + k));
          const GgmlBlockKernels& reference = ks.ggml->super_block_activations
                                                  ? scalar_ggml_super_block_kernels()
                                                  : scalar_ggml_block_kernels();
          const std::vector<float> want = run_ggml(bind(reference, tc), p, 0, tokens);
          const std::vector<float> got = run_ggml(bind(*ks.ggml, tc), p, 0, tokens);
          for (size_t i = 0; i < want.size(); ++i) {
            ASSERT_NEAR(got[i], want[i], 1e-5f * std::sqrt(static_cast<float>(k)) + 1e-4f * std::fabs(want[i]))
                << ks.isa << " " << name_of(tc.type) << " rows " << rows << " tokens " << tokens
                << " k " << k << " at " << i;
          }
        }
      }
    }
  }
}

TEST(GgmlGemm, Avx2MatchesScalar) {
  const GemmKernels* ks = avx2_gemm_kernels();
  if (ks == nullptr) GTEST_SKIP() << "CPU has no AVX2";
  expect_matches_scalar(*ks);
}

TEST(GgmlGemm, Avx512MatchesScalar) {
  const GemmKernels* ks = avx512_gemm_kernels();
  if (ks == nullptr) GTEST_SKIP() << "CPU has no AVX-512 VNNI";
  expect_matches_scalar(*ks);
}

TEST(GgmlGemm, EachTokenIsComputedAsIfAlone) {
  for (const GemmKernels* ks : {&scalar_gemm_kernels(), avx2_gemm_kernels(), avx512_gemm_kernels()}) {
    if (ks == nullptr) continue;
    for (const TypeCase& tc : cases()) {
      const GgmlProblem p = make_ggml_problem(tc, 35, 9, 768, 7);
      const std::vector<float> all = run_ggml(bind(*ks->ggml_per_token, tc), p, 0, p.tokens);
      for (int64_t t = 0; t < p.tokens; ++t) {
        const std::vector<float> one = run_ggml(bind(*ks->ggml, tc), p, t, 1);
        for (int64_t r = 0; r < p.rows; ++r) {
          ASSERT_EQ(all[t * p.rows + r], one[r]) << ks->isa << " " << name_of(tc.type) << " token " << t;
        }
      }
    }
  }
}

// The q4_k / q6_k lanes copies (k_quant_lanes.h): the same products as the scalar kernels on
// the file's layout within float rounding, and each token's outputs bit-identical whatever
// else is in the call.
struct LaneCase {
  TensorType type;
  void (*KQuantLaneKernels::*interleave)(const void*, size_t, int64_t, int64_t, void*);
  GemmKernel KQuantLaneKernels::*kernel;
};

std::vector<float> run_lanes(GemmKernel kernel, bool blocks_256, const std::vector<uint8_t>& copy,
                             const GgmlProblem& p, int64_t first_token, int64_t tokens) {
  std::vector<float> y(tokens * p.rows, NAN);
  if (blocks_256) {
    kernel(copy.data(), p.row_bytes, p.rows, &p.x256[first_token * p.k / 256], p.k / 256 * sizeof(ActBlock256),
           tokens, p.k, y.data(), p.rows);
  } else {
    kernel(copy.data(), p.row_bytes, p.rows, &p.x[first_token * p.k / 32], p.k / 32 * sizeof(ActBlock), tokens,
           p.k, y.data(), p.rows);
  }
  return y;
}

void expect_lanes_match_scalar(const GemmKernels& ks) {
  const KQuantLaneKernels& lanes = *ks.interleaved->k_lanes;
  const bool blocks_256 = ks.ggml->super_block_activations;  // the activations the set's K-quants take
  const GgmlBlockKernels& reference = blocks_256 ? scalar_ggml_super_block_kernels() : scalar_ggml_block_kernels();
  const LaneCase lane_cases[] = {
      {TensorType::kQ4_K, &KQuantLaneKernels::interleave_q4_k, &KQuantLaneKernels::q4_k},
      {TensorType::kQ6_K, &KQuantLaneKernels::interleave_q6_k, &KQuantLaneKernels::q6_k},
  };
  for (const LaneCase& lc : lane_cases) {
    const TypeCase& tc = *std::find_if(cases().begin(), cases().end(), [&](const TypeCase& c) { return c.type == lc.type; });
    for (int64_t rows : {16, 48}) {
      for (int64_t k : {256, 512, 2304}) {
        const GgmlProblem p = make_ggml_problem(tc, rows, 9, k, static_cast<uint32_t>(rows + k));
        std::vector<uint8_t> copy(p.w.size());
        (lanes.*lc.interleave)(p.w.data(), p.row_bytes, rows, k, copy.data());
        const GemmKernel kernel = lanes.*lc.kernel;
        const std::vector<float> want = run_ggml(bind(reference, tc), p, 0, p.tokens);
        const std::vector<float> all = run_lanes(kernel, blocks_256, copy, p, 0, p.tokens);
        for (size_t i = 0; i < want.size(); ++i) {
          ASSERT_NEAR(all[i], want[i], 1e-5f * std::sqrt(static_cast<float>(k)) + 1e-4f * std::fabs(want[i]))
              << ks.isa << " " << name_of(tc.type) << " rows " << rows << " k " << k << " at " << i;
        }
        for (int64_t t = 0; t < p.tokens; ++t) {
          const std::vector<float> one = run_lanes(kernel, blocks_256, copy, p, t, 1);
          for (int64_t r = 0; r < rows; ++r) {
            ASSERT_EQ(all[t * rows + r], one[r]) << ks.isa << " " << name_of(tc.type) << " token " << t << " row " << r;
          }
        }
      }
    }
  }
}

TEST(GgmlGemm, LaneCopiesMatchScalarAndKeepEachTokenAlone) {
  int sets = 0;
  for (const GemmKernels* ks : {avx2_gemm_kernels(), avx512_gemm_kernels()}) {
    if (ks == nullptr || ks->interleaved == nullptr || ks->interleaved->k_lanes == nullptr) continue;
    expect_lanes_match_scalar(*ks);
    ++sets;
  }
  if (sets == 0) GTEST_SKIP() << "no kernel set on this CPU has the K-quant lanes layout";
}

}  // namespace
}  // namespace afm::cpu
