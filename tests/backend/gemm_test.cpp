// Every SIMD gemm kernel against the scalar reference, for every weight type, on ragged shapes
// (rows and tokens not multiples of the register tile, k with a vector tail; 16+ rows with
// 4+ tokens and more than one 32-block chunk exercise the repacked batch path; q2_b rows of an
// odd number of 128-value blocks).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/gemm.h"
#include "base/half.h"
#include "quant/balanced_2bit.h"
#include "quant/block_formats.h"

namespace afm::cpu {
namespace {

enum class W { kF32, kF16, kBF16, kQ8_0, kQ4_0, kQ2_B };

bool is_quant(W type) { return type == W::kQ8_0 || type == W::kQ4_0 || type == W::kQ2_B; }

struct Problem {
  int64_t rows, tokens, k;
  std::vector<uint8_t> w;
  size_t w_row_bytes;
  std::vector<float> x;
  std::vector<ActBlock> xq;
  std::vector<ActBlock128> xq128;  // q2_b's activations
};

Problem make_problem(W type, int64_t rows, int64_t tokens, int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  Problem p{rows, tokens, k, {}, 0, std::vector<float>(tokens * k), {}, {}};
  for (float& v : p.x) v = dist(rng);
  std::vector<float> row(k);
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : row) v = dist(rng);
    std::vector<uint8_t> bytes;
    switch (type) {
      case W::kF32: bytes.resize(k * 4); std::memcpy(bytes.data(), row.data(), k * 4); break;
      case W::kF16:
      case W::kBF16: {
        bytes.resize(k * 2);
        auto* h = reinterpret_cast<uint16_t*>(bytes.data());
        for (int64_t i = 0; i < k; ++i) h[i] = type == W::kF16 ? f32_to_f16(row[i]) : f32_to_bf16(row[i]);
        break;
      }
      case W::kQ8_0:
        bytes.resize(k / 32 * sizeof(quant::BlockQ8_0));
        quant::quantize_row_q8_0(row.data(), reinterpret_cast<quant::BlockQ8_0*>(bytes.data()), k);
        break;
      case W::kQ4_0:
        bytes.resize(k / 32 * sizeof(quant::BlockQ4_0));
        quant::quantize_row_q4_0(row.data(), reinterpret_cast<quant::BlockQ4_0*>(bytes.data()), k);
        break;
      case W::kQ2_B:
        bytes.resize(k / 128 * sizeof(quant::BlockQ2B));
        quant::quantize_row_q2b_search(row.data(), reinterpret_cast<quant::BlockQ2B*>(bytes.data()), k);
        break;
    }
    p.w_row_bytes = bytes.size();
    p.w.insert(p.w.end(), bytes.begin(), bytes.end());
  }
  if (type == W::kQ2_B) {
    p.xq128.resize(tokens * k / 128);
    for (int64_t t = 0; t < tokens; ++t) quantize_activations_128(&p.x[t * k], &p.xq128[t * k / 128], k);
  } else if (is_quant(type)) {
    p.xq.resize(tokens * k / 32);
    for (int64_t t = 0; t < tokens; ++t) quantize_activations(&p.x[t * k], &p.xq[t * k / 32], k);
  }
  return p;
}

GemmKernel pick(const GemmKernels& ks, W type) {
  switch (type) {
    case W::kF32: return ks.f32;
    case W::kF16: return ks.f16;
    case W::kBF16: return ks.bf16;
    case W::kQ8_0: return ks.q8_0;
    case W::kQ4_0: return ks.q4_0;
    case W::kQ2_B: return ks.q2_b;
  }
  return nullptr;
}

// The activations a kernel of `type` takes and the bytes between their rows.
std::pair<const void*, size_t> activations(const Problem& p) {
  if (!p.xq128.empty()) return {p.xq128.data(), p.k / 128 * sizeof(ActBlock128)};
  if (!p.xq.empty()) return {p.xq.data(), p.k / 32 * sizeof(ActBlock)};
  return {p.x.data(), p.k * sizeof(float)};
}

std::vector<float> run(const GemmKernels& ks, W type, const Problem& p) {
  std::vector<float> y(p.tokens * p.rows, NAN);
  const auto [x, xrb] = activations(p);
  pick(ks, type)(p.w.data(), p.w_row_bytes, p.rows, x, xrb, p.tokens, p.k, y.data(), p.rows);
  return y;
}

void expect_matches_reference(const GemmKernels& ks) {
  for (W type : {W::kF32, W::kF16, W::kBF16, W::kQ8_0, W::kQ4_0, W::kQ2_B}) {
    const std::vector<int64_t> ks_for_type =
        type == W::kQ2_B ? std::vector<int64_t>{128, 384, 1024, 1152}
        : is_quant(type) ? std::vector<int64_t>{32, 96, 256, 1088}
                         : std::vector<int64_t>{5, 16, 40, 131};
    for (int64_t rows : {1, 3, 4, 9, 16, 35}) {
      for (int64_t tokens : {1, 2, 5, 8}) {
        for (int64_t k : ks_for_type) {
          const Problem p = make_problem(type, rows, tokens, k, static_cast<uint32_t>(rows * 1000 + tokens * 10 + k));
          const std::vector<float> want = run(scalar_gemm_kernels(), type, p);
          const std::vector<float> got = run(ks, type, p);
          for (size_t i = 0; i < want.size(); ++i) {
            // Only the float summation order differs: error grows like sqrt(k).
            ASSERT_NEAR(got[i], want[i], 1e-5f * k + 1e-4f * std::fabs(want[i]))
                << ks.isa << " type " << static_cast<int>(type) << " rows " << rows << " tokens "
                << tokens << " k " << k << " at " << i;
          }
        }
      }
    }
  }
}

TEST(Gemm, Avx2MatchesScalar) {
  const GemmKernels* ks = avx2_gemm_kernels();
  if (ks == nullptr) GTEST_SKIP() << "CPU has no AVX2";
  expect_matches_reference(*ks);
}

TEST(Gemm, Avx512MatchesScalar) {
  const GemmKernels* ks = avx512_gemm_kernels();
  if (ks == nullptr) GTEST_SKIP() << "CPU has no AVX-512 VNNI";
  expect_matches_reference(*ks);
}

// The per-token kernels: each token's outputs are bit-identical to a call with that token alone,
// whatever the batch (continuous batching relies on it, model/batch_engine.h).
TEST(Gemm, PerTokenKernelsDoNotDependOnTheBatch) {
  std::vector<const GemmKernels*> sets{&scalar_gemm_kernels(), avx2_gemm_kernels(),
                                       avx512_gemm_kernels()};
  for (const GemmKernels* ks : sets) {
    if (ks == nullptr) continue;
    for (W type : {W::kQ8_0, W::kQ4_0, W::kQ2_B, W::kF32, W::kF16, W::kBF16}) {
      // 35 rows: two 16-row packed groups and a ragged tail; k = 1088: 34 blocks, more than
      // one packed chunk, and an odd count for the single-block tail of the pair loop. Float
      // types: k = 1003 ends in 3 values past the vector steps, and 11 tokens end the AVX2
      // set's 3-token tiles with a 2-token one.
      const bool is_float = type == W::kF32 || type == W::kF16 || type == W::kBF16;
      const Problem p = make_problem(type, 35, is_float ? 11 : 9,
                                     type == W::kQ2_B ? 256 : is_float ? 1003 : 1088, 7);
      const GemmKernel batch = type == W::kQ8_0   ? ks->q8_0_per_token
                               : type == W::kQ4_0 ? ks->q4_0_per_token
                                                  : pick(*ks, type);
      const auto [x, xrb] = activations(p);
      std::vector<float> all(p.tokens * p.rows);
      batch(p.w.data(), p.w_row_bytes, p.rows, x, xrb, p.tokens, p.k, all.data(), p.rows);
      for (int64_t t = 0; t < p.tokens; ++t) {
        std::vector<float> one(p.rows);
        pick(*ks, type)(p.w.data(), p.w_row_bytes, p.rows, static_cast<const uint8_t*>(x) + t * xrb,
                        xrb, 1, p.k, one.data(), p.rows);
        for (int64_t r = 0; r < p.rows; ++r) {
          ASSERT_EQ(all[t * p.rows + r], one[r]) << ks->isa << " token " << t << " row " << r;
        }
      }
    }
  }
}

// The 16-row interleaved layout made at load: its kernels give every token's outputs
// bit-identical to the file's layout (the per-token path, one token at a time), whatever the
// batch, over the whole copy or any run of its groups; the copy has the file's size.
// The layout each interleaved kernel of `il` reads, made from the file's rows.
struct InterleavedCase {
  void (*interleave)(const void*, size_t, int64_t, int64_t, void*);
  GemmKernel kernel, file_kernel;
};

InterleavedCase interleaved_case(const GemmKernels& ks, W type) {
  const InterleavedKernels& il = *ks.interleaved;
  switch (type) {
    case W::kQ8_0: return {il.interleave_q8_0, il.q8_0, ks.q8_0_per_token};
    case W::kQ4_0: return {il.interleave_q4_0, il.q4_0, ks.q4_0_per_token};
    case W::kF16: return {il.interleave_16bit, il.floats.f16, ks.f16};
    default: return {il.interleave_16bit, il.floats.bf16, ks.bf16};
  }
}

// Sizes along k that reach every part of a layout.
// q8_0 / q4_0: k = 1088 is 34 blocks, several chunks of a group half (AVX2) or of a group
// (AVX-512, 32 blocks a chunk); k = 32: one block; 96 and 1056: an odd count, so the group ends
// with a block outside the layout's pairs (1056: alone in the last chunk).
// f16 / bf16 (pieces of 8 values in the AVX2 set, 32 in the AVX-512 set): whole pieces only
// (64, 896), a tail of under 8 values (5: no vector step; 70: after whole pieces), and, in
// 32-value pieces, tails of 8+ and 16+ values that vector steps read (88, 1000).
std::vector<int64_t> layout_ks(W type) {
  if (type == W::kQ8_0 || type == W::kQ4_0) return {32, 96, 1056, 1088};
  return {5, 64, 70, 88, 896, 1000};
}

void expect_interleaved_equals_file_layout(const GemmKernels& set) {
  const GemmKernels* ks = &set;
  for (W type : {W::kQ8_0, W::kQ4_0, W::kF16, W::kBF16}) {
    const InterleavedCase layout = interleaved_case(*ks, type);
    // 300 tokens: a prefill-sized batch (both sets send every batch through the copy); 5 ends
    // the AVX2 set's 3-token float tiles with a 2-token one.
    for (int64_t k : layout_ks(type)) {
      for (int64_t tokens : {1, 3, 4, 5, 9, 300}) {
        const Problem p = make_problem(type, 48, tokens, k, static_cast<uint32_t>(k + tokens));
        std::vector<uint8_t> copy(p.w.size(), 0xAB);
        layout.interleave(p.w.data(), p.w_row_bytes, p.rows, k, copy.data());
        const auto [x, xrb] = activations(p);
        std::vector<float> got(p.tokens * p.rows, NAN);
        layout.kernel(copy.data(), p.w_row_bytes, p.rows, x, xrb, p.tokens, k, got.data(), p.rows);
        // The middle group alone, at its offset in the copy.
        std::vector<float> middle(p.tokens * p.rows, NAN);
        layout.kernel(copy.data() + 16 * p.w_row_bytes, p.w_row_bytes, 16, x, xrb, p.tokens, k,
                      middle.data() + 16, p.rows);
        for (int64_t t = 0; t < p.tokens; ++t) {
          std::vector<float> want(p.rows);
          const auto* x_t = static_cast<const uint8_t*>(x) + t * xrb;
          layout.file_kernel(p.w.data(), p.w_row_bytes, p.rows, x_t, xrb, 1, k, want.data(), p.rows);
          for (int64_t r = 0; r < p.rows; ++r) {
            ASSERT_EQ(got[t * p.rows + r], want[r])
                << ks->isa << " type " << static_cast<int>(type) << " k " << k << " tokens " << tokens << " token "
                << t << " row " << r;
            if (r >= 16 && r < 32) {
              ASSERT_EQ(middle[t * p.rows + r], want[r]) << "middle group, row " << r;
            }
          }
        }
      }
    }
  }
}

TEST(Gemm, InterleavedKernelsEqualTheFileLayoutBitForBit) {
  int sets = 0;
  for (const GemmKernels* ks : {avx2_gemm_kernels(), avx512_gemm_kernels()}) {
    if (ks == nullptr || ks->interleaved == nullptr) continue;
    ++sets;
    expect_interleaved_equals_file_layout(*ks);
  }
  if (sets == 0) GTEST_SKIP() << "no kernel set on this CPU has the interleaved layout";
}

TEST(Gemm, QuantizedDotEqualsDequantizedDot) {
  // The integer path must compute the dot of the dequantised weights with the dequantised
  // activations (no hidden zero-point or sign error).
  constexpr int k = 256;
  for (W type : {W::kQ8_0, W::kQ4_0, W::kQ2_B}) {
    const Problem p = make_problem(type, 2, 1, k, 42);
    const std::vector<float> got = run(scalar_gemm_kernels(), type, p);
    for (int64_t r = 0; r < 2; ++r) {
      std::vector<float> w(k), x(k);
      const uint8_t* row = p.w.data() + r * p.w_row_bytes;
      if (type == W::kQ8_0) quant::dequantize_row_q8_0(reinterpret_cast<const quant::BlockQ8_0*>(row), w.data(), k);
      else if (type == W::kQ4_0) quant::dequantize_row_q4_0(reinterpret_cast<const quant::BlockQ4_0*>(row), w.data(), k);
      else quant::dequantize_row_q2b(reinterpret_cast<const quant::BlockQ2B*>(row), w.data(), k);
      for (int i = 0; i < k; ++i) {
        x[i] = type == W::kQ2_B ? p.xq128[i / 128].q[i % 128] * p.xq128[i / 128].d
                                : p.xq[i / 32].q[i % 32] * p.xq[i / 32].d;
      }
      double want = 0;
      for (int i = 0; i < k; ++i) want += static_cast<double>(w[i]) * x[i];
      EXPECT_NEAR(got[r], want, 1e-4 * (1 + std::fabs(want)));
    }
  }
}

std::vector<int> sums_of(const ActBlock& b) { return {b.sum}; }
std::vector<int> sums_of(const ActBlock128& b) { return {b.sum}; }
std::vector<int> sums_of(const ActBlock256& b) { return std::vector<int>(b.sums, b.sums + 16); }

// Every SIMD activation quantizer against the scalar one, for blocks of N (Block): normal
// values, an all-zero block, a NaN, an inf, and a block of subnormals (its scale's reciprocal
// overflows, which once reached a float-to-int conversion of inf, undefined; found by
// model_load_fuzz: such a block quantizes to zero).
template <int N, class Block>
void expect_simd_quantization_is_bit_identical(void (*reference)(const float*, Block*, int64_t),
                                               void (*GemmKernels::*simd)(const float*, Block*,
                                                                          int64_t)) {
  constexpr int kBlocks = 12;
  std::mt19937 rng(9 + N);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> x(N * kBlocks);
  for (float& v : x) v = dist(rng);
  for (int i = 0; i < N; ++i) x[2 * N + i] = 0.0f;
  x[3 * N + 5] = NAN;
  x[4 * N + 7] = INFINITY;
  for (int i = 0; i < N; ++i) x[6 * N + i] = 1e-40f * static_cast<float>(i + 1);
  for (const GemmKernels* ks : {avx2_gemm_kernels(), avx512_gemm_kernels()}) {
    if (ks == nullptr) continue;
    std::vector<Block> want(kBlocks), got(kBlocks);
    reference(x.data(), want.data(), static_cast<int64_t>(x.size()));
    (ks->*simd)(x.data(), got.data(), static_cast<int64_t>(x.size()));
    for (int b = 0; b < kBlocks; ++b) {
      if (std::isnan(want[b].d)) {
        EXPECT_TRUE(std::isnan(got[b].d)) << ks->isa << " N " << N << " block " << b;
      } else {
        EXPECT_EQ(got[b].d, want[b].d) << ks->isa << " N " << N << " block " << b;
      }
      EXPECT_EQ(sums_of(got[b]), sums_of(want[b])) << ks->isa << " N " << N << " block " << b;
      EXPECT_EQ(0, std::memcmp(got[b].q, want[b].q, N)) << ks->isa << " N " << N << " block " << b;
    }
  }
}

TEST(Gemm, SimdActivationQuantizationIsBitIdentical) {
  expect_simd_quantization_is_bit_identical<32>(quantize_activations, &GemmKernels::quantize);
  expect_simd_quantization_is_bit_identical<128>(quantize_activations_128,
                                                 &GemmKernels::quantize_128);
  expect_simd_quantization_is_bit_identical<256>(quantize_activations_256,
                                                 &GemmKernels::quantize_256);
}

TEST(Gemm, SubnormalBlocksQuantizeToZero) {
  std::vector<float> x(32);
  for (int i = 0; i < 32; ++i) x[i] = (i % 2 ? -1e-40f : 1e-40f) * static_cast<float>(i + 1);
  std::vector<ActBlock> q(1);
  quantize_activations(x.data(), q.data(), 32);
  EXPECT_EQ(q[0].d, 0.0f);
  EXPECT_EQ(q[0].sum, 0);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(q[0].q[i], 0);
}

TEST(Gemm, ActivationQuantizationRoundTrips) {
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[i] = std::sin(i * 0.37f) * (i < 32 ? 3.0f : 0.0f);
  std::vector<ActBlock> q(2);
  quantize_activations(x.data(), q.data(), 64);
  for (int i = 0; i < 32; ++i) EXPECT_NEAR(q[0].q[i] * q[0].d, x[i], q[0].d / 2 + 1e-7f);
  EXPECT_EQ(q[1].d, 0.0f);  // an all-zero block stays exactly zero
  int32_t sum = 0;
  for (int i = 0; i < 32; ++i) sum += q[0].q[i];
  EXPECT_EQ(q[0].sum, sum);
}

}  // namespace
}  // namespace afm::cpu
