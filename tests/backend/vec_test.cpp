#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "backend/cpu/vec.h"
#include "base/half.h"

namespace afm::cpu {
namespace {

TEST(Vec, Avx2MatchesScalar) {
  const VecKernels* simd = avx2_vec_kernels();
  if (simd == nullptr) GTEST_SKIP() << "CPU has no AVX2";
  const VecKernels& ref = scalar_vec_kernels();
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  for (int64_t n : {1, 7, 8, 17, 64, 131}) {
    std::vector<float> a(n), b(n);
    std::vector<uint16_t> h(n);
    for (int64_t i = 0; i < n; ++i) {
      a[i] = dist(rng);
      b[i] = dist(rng);
      h[i] = f32_to_f16(b[i]);
    }
    EXPECT_NEAR(simd->dot_f32(a.data(), b.data(), n), ref.dot_f32(a.data(), b.data(), n), 1e-4 * n);
    EXPECT_NEAR(simd->dot_f16(a.data(), h.data(), n), ref.dot_f16(a.data(), h.data(), n), 1e-4 * n);
    std::vector<float> y1(a), y2(a);
    simd->axpy_f16(0.5f, h.data(), y1.data(), n);
    ref.axpy_f16(0.5f, h.data(), y2.data(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(y1[i], y2[i], 1e-5f);
    simd->axpy_f32(-1.5f, b.data(), y1.data(), n);
    ref.axpy_f32(-1.5f, b.data(), y2.data(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(y1[i], y2[i], 1e-5f);
    std::vector<uint16_t> h1(n), h2(n);
    simd->f32_to_f16(a.data(), h1.data(), n);
    ref.f32_to_f16(a.data(), h2.data(), n);
    EXPECT_EQ(h1, h2);
  }
}

TEST(Vec, AttentionRowKernelsAndF16RoundingMatchScalar) {
  const VecKernels* simd = avx2_vec_kernels();
  if (simd == nullptr) GTEST_SKIP() << "CPU has no AVX2";
  const VecKernels& ref = scalar_vec_kernels();
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (int64_t d : {8, 64, 72}) {
    const int64_t n = 13;
    std::vector<float> q(d), k(n * d), p(n), s1(n), s2(n), o1(d, 0.5f), o2(d, 0.5f);
    std::vector<uint16_t> kh(n * d);
    for (float& v : q) v = dist(rng);
    for (int64_t i = 0; i < n * d; ++i) {
      k[i] = dist(rng);
      kh[i] = f32_to_f16(k[i]);
    }
    for (float& v : p) v = std::fabs(dist(rng));
    simd->scores_f32(q.data(), k.data(), n, d, 0.125f, s1.data());
    ref.scores_f32(q.data(), k.data(), n, d, 0.125f, s2.data());
    for (int64_t j = 0; j < n; ++j) EXPECT_NEAR(s1[j], s2[j], 1e-5f * d);
    simd->scores_f16(q.data(), kh.data(), n, d, 0.125f, s1.data());
    ref.scores_f16(q.data(), kh.data(), n, d, 0.125f, s2.data());
    for (int64_t j = 0; j < n; ++j) EXPECT_NEAR(s1[j], s2[j], 1e-5f * d);
    simd->mix_f16(p.data(), kh.data(), n, d, o1.data());
    ref.mix_f16(p.data(), kh.data(), n, d, o2.data());
    for (int64_t i = 0; i < d; ++i) EXPECT_NEAR(o1[i], o2[i], 1e-4f);
    simd->mix_f32(p.data(), k.data(), n, d, o1.data());
    ref.mix_f32(p.data(), k.data(), n, d, o2.data());
    for (int64_t i = 0; i < d; ++i) EXPECT_NEAR(o1[i], o2[i], 1e-4f);
    std::vector<float> r1(d), r2(d);
    simd->round_f16(q.data(), r1.data(), d);
    ref.round_f16(q.data(), r2.data(), d);
    EXPECT_EQ(r1, r2);
  }
}

TEST(Vec, GeluTanhMulMatchesTheTanhFormulaAndScalarIncludingExtremes) {
  std::vector<float> g{-200, -90, -20, -5, -1, -1e-3f, 0, 1e-3f, 0.5f, 1, 3, 5, 20, 90, 200, 7, -7, 2.5f, 4};
  std::vector<float> u(g.size(), 1.5f), scalar(g.size()), simd_out(g.size());
  scalar_vec_kernels().gelu_tanh_mul(g.data(), u.data(), scalar.data(), static_cast<int64_t>(g.size()));
  for (size_t i = 0; i < g.size(); ++i) {  // PyTorch's gelu(approximate="tanh") definition
    const double x = g[i];
    const double want = 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))) * 1.5;
    EXPECT_NEAR(scalar[i], want, 1e-5 * (1 + std::fabs(want))) << g[i];
  }
  const VecKernels* simd = avx2_vec_kernels();
  if (simd == nullptr) GTEST_SKIP() << "CPU has no AVX2";
  simd->gelu_tanh_mul(g.data(), u.data(), simd_out.data(), static_cast<int64_t>(g.size()));
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_TRUE(std::isfinite(simd_out[i])) << g[i];
    EXPECT_NEAR(simd_out[i], scalar[i], 1e-6f * (1 + std::fabs(scalar[i]))) << g[i];
  }
}

TEST(Vec, SiluMulMatchesScalarIncludingExtremes) {
  const VecKernels* simd = avx2_vec_kernels();
  if (simd == nullptr) GTEST_SKIP() << "CPU has no AVX2";
  std::vector<float> g{-200, -90, -20, -1, -1e-3f, 0, 1e-3f, 0.5f, 1, 3, 20, 90, 200, 7, -7, 2.5f, 4};
  std::vector<float> u(g.size(), 1.5f), out1(g.size()), out2(g.size());
  simd->silu_mul(g.data(), u.data(), out1.data(), static_cast<int64_t>(g.size()));
  scalar_vec_kernels().silu_mul(g.data(), u.data(), out2.data(), static_cast<int64_t>(g.size()));
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_TRUE(std::isfinite(out1[i])) << g[i];
    EXPECT_NEAR(out1[i], out2[i], 1e-6f * (1 + std::fabs(out2[i]))) << g[i];
  }
}

}  // namespace
}  // namespace afm::cpu

namespace afm::cpu {
namespace {

// The AVX-512 grouped-query pairs and quads: bit-identical to the AVX2 single-head functions (the same
// arithmetic lane for lane), on head sizes the fast path takes (multiples of 16, over one and
// two register passes) and one it hands back (40). The other sets have no pairs.
TEST(Vec, AttentionPairsEqualTwoSingleHeadCalls) {
  std::mt19937 rng(17);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  EXPECT_EQ(scalar_vec_kernels().scores_f16_pair, nullptr);
  const VecKernels* avx2 = avx2_vec_kernels();
  if (avx2 == nullptr) GTEST_SKIP() << "CPU has no AVX2";
  for (const VecKernels* ks : {avx2, avx512_vec_kernels()}) {
    if (ks == nullptr) continue;  // no AVX-512: the AVX2 set's rows are still checked
    const VecKernels& single = *avx2;
    for (int64_t d : {16, 40, 64, 128, 144, 256}) {
      for (int64_t n : {1, 7, 33}) {
        std::vector<float> q0(d), q1(d), p0(n), p1(n);
        std::vector<uint16_t> rows(n * d);
        for (float& v : q0) v = dist(rng);
        for (float& v : q1) v = dist(rng);
        for (float& v : p0) v = std::fabs(dist(rng));
        for (float& v : p1) v = std::fabs(dist(rng));
        for (uint16_t& h : rows) h = f32_to_f16(dist(rng));
        ASSERT_NE(ks->scores_f16_pair, nullptr) << ks->isa;
        std::vector<float> s0(n), s1(n), w0(n), w1(n);
        ks->scores_f16_pair(q0.data(), q1.data(), rows.data(), n, d, 0.125f, s0.data(), s1.data());
        single.scores_f16(q0.data(), rows.data(), n, d, 0.125f, w0.data());
        single.scores_f16(q1.data(), rows.data(), n, d, 0.125f, w1.data());
        std::vector<float> o0(d, 0.5f), o1(d, -0.25f), x0(o0), x1(o1);
        ks->mix_f16_pair(p0.data(), p1.data(), rows.data(), n, d, o0.data(), o1.data());
        single.mix_f16(p0.data(), rows.data(), n, d, x0.data());
        single.mix_f16(p1.data(), rows.data(), n, d, x1.data());
        for (int64_t j = 0; j < n; ++j) {
          ASSERT_EQ(s0[j], w0[j]) << ks->isa << " d " << d << " n " << n << " key " << j;
          ASSERT_EQ(s1[j], w1[j]) << ks->isa << " d " << d << " n " << n << " key " << j;
        }
        for (int64_t i = 0; i < d; ++i) {
          ASSERT_EQ(o0[i], x0[i]) << ks->isa << " d " << d << " n " << n << " at " << i;
          ASSERT_EQ(o1[i], x1[i]) << ks->isa << " d " << d << " n " << n << " at " << i;
        }
        // Four rows (two heads of two queries): q1 / p1 and the two reversed stand for the others.
        std::vector<float> rq0(q0.rbegin(), q0.rend()), rq1(q1.rbegin(), q1.rend());
        std::vector<float> rp0(p0.rbegin(), p0.rend()), rp1(p1.rbegin(), p1.rend());
        const float* q4[4] = {q0.data(), q1.data(), rq0.data(), rq1.data()};
        const float* p4[4] = {p0.data(), p1.data(), rp0.data(), rp1.data()};
        std::vector<std::vector<float>> s4(4, std::vector<float>(n)), o4(4, std::vector<float>(d, 0.75f));
        float* const s4p[4] = {s4[0].data(), s4[1].data(), s4[2].data(), s4[3].data()};
        float* const o4p[4] = {o4[0].data(), o4[1].data(), o4[2].data(), o4[3].data()};
        ks->scores_f16_quad(q4, rows.data(), n, d, 0.125f, s4p);
        ks->mix_f16_quad(p4, rows.data(), n, d, o4p);
        for (int r = 0; r < 4; ++r) {
          std::vector<float> ws(n), wo(d, 0.75f);
          single.scores_f16(q4[r], rows.data(), n, d, 0.125f, ws.data());
          single.mix_f16(p4[r], rows.data(), n, d, wo.data());
          ASSERT_EQ(s4[r], ws) << "quad scores, row " << r << " d " << d << " n " << n;
          ASSERT_EQ(o4[r], wo) << "quad mix, row " << r << " d " << d << " n " << n;
        }
      }
    }
  }
}

// Softmax against a double-precision reference, for every set the host runs: lengths around the
// vector width, wide score ranges (entries far below the maximum must come out near 0, not
// NaN), a single entry, and a NaN that must not be hidden.
TEST(Vec, SoftmaxMatchesDoublePrecisionInEverySet) {
  std::vector<const VecKernels*> sets{&scalar_vec_kernels()};
  if (avx2_vec_kernels() != nullptr) sets.push_back(avx2_vec_kernels());
  if (avx512_vec_kernels() != nullptr) sets.push_back(avx512_vec_kernels());
  std::mt19937 rng(11);
  for (const VecKernels* set : sets) {
    for (float spread : {0.5f, 8.0f, 60.0f}) {
      std::normal_distribution<float> dist(3.0f, spread);
      for (int64_t n : {1, 2, 7, 8, 9, 16, 23, 100, 4099}) {
        std::vector<float> x(n);
        for (float& v : x) v = dist(rng);
        if (n > 3) x[n / 2] = x[0] - 300.0f;  // far below the maximum: exp underflows
        double max_value = x[0];
        for (float v : x) max_value = std::max(max_value, static_cast<double>(v));
        double sum = 0;
        for (float v : x) sum += std::exp(v - max_value);
        std::vector<float> y(x);
        set->softmax(y.data(), n);
        // exp within a few ulp, plus the float sum's rounding, which grows with n
        const double rtol = 3e-7 * (4 + std::sqrt(static_cast<double>(n)));
        double total = 0;
        for (int64_t j = 0; j < n; ++j) {
          const double want = std::exp(x[j] - max_value) / sum;
          ASSERT_NEAR(y[j], want, rtol * want + 1e-12) << set->isa << " n=" << n << " j=" << j;
          total += y[j];
        }
        EXPECT_NEAR(total, 1.0, 1e-5) << set->isa << " n=" << n;
      }
    }
    std::vector<float> with_nan{1.0f, NAN, 2.0f, 0.5f, 1, 1, 1, 1, 1, 1};
    set->softmax(with_nan.data(), static_cast<int64_t>(with_nan.size()));
    for (float v : with_nan) EXPECT_TRUE(std::isnan(v)) << set->isa;
  }
}

}  // namespace
}  // namespace afm::cpu
