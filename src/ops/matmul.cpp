#include "ops/matmul.h"

#include <algorithm>

#include "base/error.h"
#include "backend/cpu/gemm_astc.h"
#include "backend/cpu/vec.h"
#include "gguf/types.h"

namespace afm::ops {
namespace {

cpu::GemmKernel kernel_for(const cpu::GemmKernels& k, gguf::TensorType type) {
  switch (type) {
    case gguf::TensorType::kF32: return k.f32;
    case gguf::TensorType::kF16: return k.f16;
    case gguf::TensorType::kBF16: return k.bf16;
    case gguf::TensorType::kQ8_0: return k.q8_0;
    case gguf::TensorType::kQ4_0: return k.q4_0;
    case gguf::TensorType::kQ2_B: return k.q2_b;
    case gguf::TensorType::kQ4_1: return k.ggml->q4_1;
    case gguf::TensorType::kQ5_0: return k.ggml->q5_0;
    case gguf::TensorType::kQ5_1: return k.ggml->q5_1;
    case gguf::TensorType::kQ2_K: return k.ggml->q2_k;
    case gguf::TensorType::kQ3_K: return k.ggml->q3_k;
    case gguf::TensorType::kQ4_K: return k.ggml->q4_k;
    case gguf::TensorType::kQ5_K: return k.ggml->q5_k;
    case gguf::TensorType::kQ6_K: return k.ggml->q6_k;
    default: return nullptr;
  }
}

// The kernel whose outputs for each token do not depend on the other tokens of the call.
cpu::GemmKernel per_token_kernel_for(const cpu::GemmKernels& k, gguf::TensorType type) {
  switch (type) {
    case gguf::TensorType::kQ8_0: return k.q8_0_per_token;
    case gguf::TensorType::kQ4_0: return k.q4_0_per_token;
    case gguf::TensorType::kQ4_K: return k.ggml_per_token->q4_k;
    case gguf::TensorType::kQ5_K: return k.ggml_per_token->q5_k;
    case gguf::TensorType::kQ6_K: return k.ggml_per_token->q6_k;
    default: return kernel_for(k, type);
  }
}

// What a weight type's kernels in set k read: f32 rows (f16 rows rounded through f16), or
// int8 activation blocks of 32, 128 (q2_b) or 256 values (K-quants, in sets that take them).
enum class ActFormat { kFloat, kBlock32, kBlock128, kBlock256 };

bool is_k_quant(gguf::TensorType type) {
  switch (type) {
    case gguf::TensorType::kQ2_K: case gguf::TensorType::kQ3_K: case gguf::TensorType::kQ4_K:
    case gguf::TensorType::kQ5_K: case gguf::TensorType::kQ6_K: return true;
    default: return false;
  }
}

ActFormat act_format(const cpu::GemmKernels& k, gguf::TensorType type) {
  const auto traits = gguf::tensor_type_traits(type);
  if (traits.block_elements <= 1 || traits.tile_rows != 1) return ActFormat::kFloat;
  if (type == gguf::TensorType::kQ2_B) return ActFormat::kBlock128;
  // The per-token set must read what the batched one reads: one quantized copy serves both.
  AFM_CHECK(k.ggml->super_block_activations == k.ggml_per_token->super_block_activations);
  if (is_k_quant(type) && k.ggml->super_block_activations) return ActFormat::kBlock256;
  return ActFormat::kBlock32;
}

bool is_float_group_type(gguf::TensorType type) {
  return type == gguf::TensorType::kF16 || type == gguf::TensorType::kBF16;
}

// The rows of [begin, end) in whole 16-row groups of a matrix of `rows` rows.
Range whole_groups(int64_t begin, int64_t end, int64_t rows) {
  constexpr int64_t kGroup = 16;
  const int64_t first = (begin + kGroup - 1) / kGroup * kGroup;
  const int64_t last = std::min(end, rows) / kGroup * kGroup;
  return first < last ? Range{first, last} : Range{0, 0};
}

// The rows of [begin, end) in whole 16-row groups of w's interleaved copy; empty when w has
// none, this kernel set cannot read it, or n_tok tokens run faster on the file's layout.
Range interleaved_rows(const Matrix& w, const cpu::GemmKernels& k, int64_t n_tok, int64_t begin,
                       int64_t end) {
  if (w.interleaved == nullptr || k.interleaved == nullptr) return {0, 0};
  if (!is_float_group_type(w.type) && n_tok > k.interleaved->max_tokens) return {0, 0};
  return whole_groups(begin, end, w.rows);
}

// The lanes kernel of w when w is q4_k / q6_k with a lanes copy this set reads (gemm null
// otherwise), and the most tokens it takes in one call.
struct LaneKernel {
  cpu::GemmKernel gemm = nullptr;
  int64_t max_tokens = 0;
};

LaneKernel lanes_kernel(const Matrix& w, const cpu::GemmKernels& k) {
  if (w.interleaved == nullptr || k.interleaved == nullptr || k.interleaved->k_lanes == nullptr) return {};
  const cpu::KQuantLaneKernels& lanes = *k.interleaved->k_lanes;
  if (w.type == gguf::TensorType::kQ4_K) return {lanes.q4_k, lanes.q4_k_max_tokens};
  if (w.type == gguf::TensorType::kQ6_K) return {lanes.q6_k, lanes.q6_k_max_tokens};
  return {};
}

cpu::GemmKernel interleaved_kernel(const Matrix& w, const cpu::GemmKernels& k) {
  switch (w.type) {
    case gguf::TensorType::kQ8_0: return k.interleaved->q8_0;
    case gguf::TensorType::kQ4_0: return k.interleaved->q4_0;
    case gguf::TensorType::kF16: return k.interleaved->floats.f16;
    default: return k.interleaved->floats.bf16;
  }
}

// The row of a matrix (rows, `bytes` in all) where `offset` bytes into it fall, on a multiple
// of `group` (16, so that interleaved groups stay whole; 6 for astc6x6, whose tiles span 6
// rows) or at either end. Monotonic in offset, so consecutive threads' cuts partition the rows.
int64_t row_at(int64_t offset, int64_t bytes, int64_t rows, int64_t group) {
  if (offset <= 0) return 0;
  if (offset >= bytes) return rows;
  return std::min(rows, offset * rows / bytes / group * group);
}

// Rows per cache block: enough weight bytes to be reused from L2 by every token of a batch.
int64_t rows_per_block(size_t row_bytes) {
  constexpr size_t kBlockBytes = 192 * 1024;
  return std::max<int64_t>(16, static_cast<int64_t>(kBlockBytes / std::max<size_t>(row_bytes, 1)) & ~int64_t{15});
}

}  // namespace

bool is_supported_weight_type(gguf::TensorType type) {
  return type == gguf::TensorType::kASTC6X6 || kernel_for(cpu::scalar_gemm_kernels(), type) != nullptr;
}

size_t row_bytes_for(gguf::TensorType type, int64_t cols) {
  const auto& traits = gguf::tensor_type_traits(type);
  if (traits.tile_rows > 1) return 0;
  return static_cast<size_t>(cols / traits.block_elements) * traits.block_bytes;
}

size_t matrix_bytes(gguf::TensorType type, int64_t rows, int64_t cols) {
  const auto bytes = gguf::tensor_data_bytes(type, {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows)});
  AFM_CHECK(bytes.has_value());
  return static_cast<size_t>(*bytes);
}

Activations::Activations(const float* x, int64_t tokens, int64_t k, ActivationScratch& scratch)
    : x_(x), tokens_(tokens), k_(k), scratch_(scratch) {}

namespace {

// Quantizes every row of x (tokens x k) into blocks of Block (k / per_block of them per row),
// split across the pool by rows (one thread for a single token).
template <class Block, class Quantize>
void quantize_rows(const float* x, int64_t tokens, int64_t k, int64_t per_block, Block* out,
                   Quantize quantize, Workers& pool) {
  const int64_t blocks_per_row = k / per_block;
  auto rows = [&](int index, int count) {
    const Range r = split_range(tokens, index, count);
    for (int64_t t = r.begin; t < r.end; ++t) quantize(x + t * k, out + t * blocks_per_row, k);
  };
  if (tokens == 1) {
    pool.once([&] { rows(0, 1); });
  } else {
    pool.run(rows);
  }
}

}  // namespace

// The batch in blocks of per_block values, quantized into `store` the first time it is asked for.
template <class Block>
const Block* Activations::quantized(std::vector<Block>& store, bool& done, int64_t per_block,
                                    void (*quantize)(const float*, Block*, int64_t), Workers& pool) {
  if (!done) {
    AFM_CHECK(k_ % per_block == 0);
    if (store.size() < static_cast<size_t>(tokens_ * (k_ / per_block))) store.resize(tokens_ * (k_ / per_block));
    quantize_rows(x_, tokens_, k_, per_block, store.data(), quantize, pool);
    done = true;
  }
  return store.data();
}

const cpu::ActBlock* Activations::q8(Workers& pool) {
  return quantized(scratch_.q8, quantized_, 32, cpu::best_gemm_kernels().quantize, pool);
}

const cpu::ActBlock128* Activations::q8_128(Workers& pool) {
  return quantized(scratch_.q8_128, quantized_128_, 128, cpu::best_gemm_kernels().quantize_128, pool);
}

const cpu::ActBlock256* Activations::q8_256(Workers& pool) {
  return quantized(scratch_.q8_256, quantized_256_, 256, cpu::best_gemm_kernels().quantize_256, pool);
}

const float* Activations::f16_rounded(Workers& pool) {
  if (!rounded_) {
    if (scratch_.f16.size() < static_cast<size_t>(tokens_ * k_)) scratch_.f16.resize(tokens_ * k_);
    float* out = scratch_.f16.data();
    const cpu::VecKernels& vk = cpu::best_vec_kernels();
    parallel_for(pool, tokens_, [&](int64_t begin, int64_t end) {
      vk.round_f16(x_ + begin * k_, out + begin * k_, (end - begin) * k_);
    });
    rounded_ = true;
  }
  return scratch_.f16.data();
}

void ActivationScratch::reserve(int64_t tokens, int64_t k) {
  const size_t blocks = static_cast<size_t>(tokens * ((k + 31) / 32));
  if (q8.size() < blocks) q8.resize(blocks);
  const size_t blocks_128 = static_cast<size_t>(tokens * ((k + 127) / 128));
  if (q8_128.size() < blocks_128) q8_128.resize(blocks_128);
  const size_t blocks_256 = static_cast<size_t>(tokens * ((k + 255) / 256));
  if (q8_256.size() < blocks_256) q8_256.resize(blocks_256);
  if (f16.size() < static_cast<size_t>(tokens * k)) f16.resize(tokens * k);
}

void matmul_group(Activations& x, std::initializer_list<MatmulOutput> outputs, Workers& pool) {
  const cpu::GemmKernels& kernels = cpu::best_gemm_kernels();
  // Per output, worked out once for every thread: what its kernels read, and its bytes.
  constexpr size_t kMaxOutputs = 8;
  AFM_CHECK(outputs.size() <= kMaxOutputs);
  ActFormat formats[kMaxOutputs];
  int64_t bytes[kMaxOutputs];
  bool need_q8 = false, need_q8_128 = false, need_q8_256 = false, need_f16 = false;
  int64_t total_bytes = 0;
  size_t n = 0;
  for (const MatmulOutput& o : outputs) {
    AFM_CHECK(o.w->cols == x.k());
    AFM_CHECK(is_supported_weight_type(o.w->type));
    formats[n] = act_format(kernels, o.w->type);
    bytes[n] = static_cast<int64_t>(matrix_bytes(o.w->type, o.w->rows, o.w->cols));
    need_q8 |= formats[n] == ActFormat::kBlock32;
    need_q8_128 |= formats[n] == ActFormat::kBlock128;
    need_q8_256 |= formats[n] == ActFormat::kBlock256;
    need_f16 |= o.w->type == gguf::TensorType::kF16;
    total_bytes += bytes[n++];
  }
  const cpu::ActBlock* q8 = need_q8 ? x.q8(pool) : nullptr;
  const cpu::ActBlock128* q8_128 = need_q8_128 ? x.q8_128(pool) : nullptr;
  const cpu::ActBlock256* q8_256 = need_q8_256 ? x.q8_256(pool) : nullptr;
  const float* x_f16 = need_f16 ? x.f16_rounded(pool) : nullptr;
  const int64_t n_tok = x.tokens(), k = x.k();
  const int64_t per_token = std::clamp<int64_t>(x.per_token_rows(), 0, n_tok);
  // Threads split the concatenated weight bytes of all outputs, so uneven matrices and mixed
  // types still balance (Q4_K_M files put q6_k beside q4_k in one group: an even split of
  // rows left one thread half as much work again as the other).
  pool.run([&](int index, int count) {
    const int64_t first = total_bytes * index / count, last = total_bytes * (index + 1) / count;
    int64_t base = 0;
    size_t i = 0;
    for (const MatmulOutput& o : outputs) {
      const Matrix& w = *o.w;
      const ActFormat format = formats[i];
      const int64_t group = w.type == gguf::TensorType::kASTC6X6 ? 6 : 16;
      const int64_t begin = row_at(first - base, bytes[i], w.rows, group);
      const int64_t end = row_at(last - base, bytes[i], w.rows, group);
      base += bytes[i++];
      if (begin >= end) continue;
      if (w.type == gguf::TensorType::kASTC6X6) {
        if (w.interleaved != nullptr) {
          cpu::astc6x6_lanes_gemm(w.interleaved, w.rows, w.cols, begin, end, x.f32(), n_tok, o.y, w.rows);
        } else {
          cpu::astc6x6_gemm(static_cast<const uint8_t*>(w.data), w.rows, w.cols, begin, end,
                            x.f32(), n_tok, o.y, w.rows);
        }
        continue;
      }
      const void* xp = w.type == gguf::TensorType::kF16 ? static_cast<const void*>(x_f16)
                                                        : static_cast<const void*>(x.f32());
      size_t x_row_bytes = k * sizeof(float);
      switch (format) {
        case ActFormat::kFloat: break;
        case ActFormat::kBlock32: xp = q8, x_row_bytes = (k / 32) * sizeof(cpu::ActBlock); break;
        case ActFormat::kBlock128: xp = q8_128, x_row_bytes = (k / 128) * sizeof(cpu::ActBlock128); break;
        case ActFormat::kBlock256: xp = q8_256, x_row_bytes = (k / 256) * sizeof(cpu::ActBlock256); break;
      }
      const cpu::GemmKernel kernel = kernel_for(kernels, w.type);
      const cpu::GemmKernel per_token_kernel = per_token_kernel_for(kernels, w.type);
      // Tokens [t0, n_tok) of rows [from, to) in the file's layout through the batched kernel,
      // a cache block at a time, so that every token reads the same weight block while it is
      // in L2.
      auto file_batched = [&](int64_t from, int64_t to, int64_t t0) {
        const int64_t step = n_tok - t0 == 1 ? to - from : rows_per_block(w.row_bytes);
        for (int64_t r = from; r < to; r += step) {
          kernel(static_cast<const uint8_t*>(w.data) + r * w.row_bytes, w.row_bytes, std::min(step, to - r),
                 static_cast<const uint8_t*>(xp) + t0 * x_row_bytes, x_row_bytes, n_tok - t0, k,
                 o.y + t0 * w.rows + r, w.rows);
        }
      };
      // Rows in the file's layout, a cache block at a time, so that both calls read the same
      // weight block while it is in L2: the per-token rows through the per-token kernel, the
      // rest batched; a set whose batched kernel is per-token exact takes every token at once.
      auto file_layout = [&](int64_t from, int64_t to) {
        if (per_token_kernel == kernel || per_token == 0) {
          file_batched(from, to, 0);
          return;
        }
        const int64_t step = n_tok == 1 ? to - from : rows_per_block(w.row_bytes);
        for (int64_t r = from; r < to; r += step) {
          const int64_t n = std::min(step, to - r);
          per_token_kernel(static_cast<const uint8_t*>(w.data) + r * w.row_bytes, w.row_bytes, n, xp, x_row_bytes,
                           per_token, k, o.y + r, w.rows);
          if (per_token < n_tok) file_batched(r, r + n, per_token);
        }
      };
      const LaneKernel lanes = lanes_kernel(w, kernels);
      const Range lane_rows = lanes.gemm != nullptr ? whole_groups(begin, end, w.rows) : Range{0, 0};
      if (lane_rows.begin < lane_rows.end) {
        // q4_k / q6_k lanes copies: per-token exact but rounded otherwise than the file
        // layout's kernels, so every per-token row of their groups goes there, and the rest of
        // a batch too up to max_tokens (beyond it the file layout's batched path is faster).
        file_layout(begin, lane_rows.begin);
        const int64_t lane_tokens = n_tok <= lanes.max_tokens ? n_tok : per_token;
        if (lane_tokens > 0) {
          lanes.gemm(static_cast<const uint8_t*>(w.interleaved) + lane_rows.begin * w.row_bytes, w.row_bytes,
                     lane_rows.end - lane_rows.begin, xp, x_row_bytes, lane_tokens, k, o.y + lane_rows.begin,
                     w.rows);
        }
        if (lane_tokens < n_tok) file_batched(lane_rows.begin, lane_rows.end, lane_tokens);
        file_layout(lane_rows.end, end);
        continue;
      }
      const Range copy = interleaved_rows(w, kernels, n_tok, begin, end);
      if (copy.begin >= copy.end) {
        file_layout(begin, end);
        continue;
      }
      // The interleaved kernels are per-token exact and agree with the file's layout bit for
      // bit, so the rows around the copy's groups may take the other path. Float groups walk
      // a batch as the file layout's tiles do (all its tokens over each tile), so they take it
      // a cache block at a time as well; q8_0 / q4_0 chunk their blocks themselves.
      file_layout(begin, copy.begin);
      const cpu::GemmKernel copy_kernel = interleaved_kernel(w, kernels);
      const int64_t step = n_tok == 1 || !is_float_group_type(w.type) ? copy.end - copy.begin
                                                                       : rows_per_block(w.row_bytes);
      for (int64_t r = copy.begin; r < copy.end; r += step) {
        copy_kernel(static_cast<const uint8_t*>(w.interleaved) + r * w.row_bytes, w.row_bytes,
                    std::min(step, copy.end - r), xp, x_row_bytes, n_tok, k, o.y + r, w.rows);
      }
      file_layout(copy.end, end);
    }
  });
}

}  // namespace afm::ops
