// Matrix-multiply kernels: y[t][r] = dot(W row r, X row t) for a block of weight rows and a
// block of tokens. One kernel per weight type and instruction set; the scalar set is the
// reference that tests compare the others against and the fallback on any CPU.
//
// Weights stay in their file format (read in place from the mmap):
//   f32 / f16 / bf16 rows of k values; q8_0 / q4_0 rows of k / 32 ggml blocks; q2_b rows of
//   k / 128 balanced 2-bit blocks (quant/balanced_2bit.h). The exceptions: q8_0 / q4_0 rows
//   may also be given in a 16-row interleaved copy made at load, f16 / bf16 in 4-row float
//   groups and q4_k / q6_k in 16-row lanes (InterleavedKernels below).
// Activations: f32 rows for float weights; ActBlock rows (quantize_activations) for the
// quantised types, so the inner loop is an integer dot product (VNNI where the CPU has it).
// Kernels never allocate, throw or log. k must be a multiple of the weight type's block size.
#pragma once

#include <cstddef>
#include <cstdint>

namespace afm::cpu {

// How far ahead decode kernels ask for weight lines a second time, into L2 (_MM_HINT_T1), on top
// of their nearer L1 requests. With the L1 requests alone too few lines were in flight for the
// arithmetic to overlap the memory reads, so time per byte was their sum: one AMD EPYC (Zen 4)
// core streamed q4_k from DRAM at 9.3 GB/s against 21 GB/s from L2, and interleaved q4_0 at 16
// against a 27 GB/s read bandwidth; with both requests 21.6 and 23-27 GB/s
// (bench/gemm_kernel_bench --type T --rows 16384 --k 4096, and --rows 65536 --k 2048; the AVX2
// sets gain alike, docs/benchmarks.md). 16 and 32 KB measured alike; a few such streams per
// thread stay well inside any L2. (The interleaved q8_0 / q4_0 and the q4_k / q6_k lanes kernels
// of the AVX-512 set ask for nothing in decode: their layouts are read front to back, which the
// hardware prefetcher follows faster; see below. Their batches still ask.)
inline constexpr int kFarPrefetchBytes = 16384;

// How far ahead the AVX2 set's decode kernels on the front-to-back layouts (q8_0 / q4_0
// interleaved, f16 / bf16 float groups, q4_k / q6_k lanes) ask for each line into L1. The
// AVX-512 hosts measured (AMD Zen 4) stream those layouts fastest with no request at all, but
// on an AVX2-only AMD Zen 3 the hardware prefetcher alone left one core's interleaved q4_0 at
// 7.3-7.8 GB/s from DRAM against 9.5-10.2 with requests 1-4 KB ahead (12-14 GB/s read loop),
// and decode of the Qwen2-0.5B shape at 2 threads went from 42.9 to 53.1 tokens/s on q4_0 and
// from 21.4 to 31.8 on q8_0 (medians; docs/engine.md, "Reading weights front to back").
inline constexpr int kAvx2DecodePrefetchBytes = 1024;

// 32 activations quantised to int8 with one float scale; `sum` (the sum of q) lets a kernel
// multiply unsigned 4-bit weights directly and subtract the zero point afterwards.
struct ActBlock {
  float d;
  int32_t sum;
  int8_t q[32];
};
static_assert(sizeof(ActBlock) == 40);

// 128 activations with one scale, for q2_b weights: a q2_b block's whole dot product is then
// one integer sum (two vpdpbusd) and one float multiply-add, where 32-value activation blocks
// need four conversions and four multiply-adds. llama.cpp's 2-bit types pair with 256-value
// activation blocks (Q8_K) for the same reason.
struct ActBlock128 {
  float d;
  int32_t sum;
  int8_t q[128];
};
static_assert(sizeof(ActBlock128) == 136);

// 256 activations with one scale and the sums of each 16 values, for the K-quant kernels of a
// set whose GgmlBlockKernels::super_block_activations is true: a K-quant super-block's dot
// product is then integer sums weighted by the block's integer sub-block scales (and mins)
// plus two float multiply-adds, where 32-value activation blocks need a conversion and a
// float multiply-add per 32 values. llama.cpp pairs its K-quants with the same kind of
// blocks (Q8_K) for the same reason; the price is one activation scale per 256 values.
struct ActBlock256 {
  float d;
  int16_t sums[16];  // sums[g] = q[16 g] + ... + q[16 g + 15]
  int8_t q[256];
};
static_assert(sizeof(ActBlock256) == 292);

// Calls with fewer tokens than this compute every token's outputs exactly as a one-token call
// would (see GemmKernels::q8_0_per_token); larger ones may take a batched path.
inline constexpr int64_t kPerTokenPathBelow = 4;

// w: n_rows rows of w_row_bytes; x: n_tok rows of x_row_bytes; y[t * y_stride + r].
using GemmKernel = void (*)(const void* w, size_t w_row_bytes, int64_t n_rows, const void* x,
                            size_t x_row_bytes, int64_t n_tok, int64_t k, float* y,
                            int64_t y_stride);

// ggml's read-only block types (quant/block_formats.h: q4_1, q5_0, q5_1; quant/k_quants.h:
// q2_k ... q6_k) against ActBlock rows (x_row_bytes = k / 32 * 40; a 256-value super-block meets
// eight activation blocks). Every entry is set: a set without its own version of a type points
// at the scalar one.
struct GgmlBlockKernels {
  GemmKernel q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k;
  // True: the K-quant entries (q2_k ... q6_k) take ActBlock256 rows (x_row_bytes = k / 256 *
  // 292) instead; q4_1 / q5_0 / q5_1 always take ActBlock rows.
  bool super_block_activations = false;
};

// q8_0 / q4_0 weights in the 16-row interleaved layout: for each group of 16 rows, 32-bit lane
// r of every 64-byte word holds row r's bytes, so one integer dot product instruction advances
// 8 (AVX2) or 16 outputs and a block's scale work is paid once per 8 or 16 rows instead of once
// per row. In a group of n_blocks blocks (k / 32) a block is
//   its words: q8_0 eight 64-byte words, word g lane r = row r's codes 4g .. 4g+3 plus 128
//     (unsigned); q4_0 four words, word h lane r = row r's nibble bytes qs[4h .. 4h+3] as in
//     the file (low nibbles: values 4h.., high nibbles: values 16 + 4h..);
//   its scales: the 16 rows' f16 block scales in row order (32 bytes);
// and blocks go in pairs, [words b | words b+1 | scales b | scales b+1], a last odd block as
// [words b | scales b] (interleaved_layout.inc). A group is 16 x row_bytes, the file's size for
// those rows, so row offsets are the file's; and a kernel reads it front to back with no jump,
// which the hardware prefetcher needs to stream it (the scales had sat after all the words, a
// jump per group that held one core's q4_0 decode from DRAM to ~19 GB/s where the same loop
// on the pairs reads ~30).
//
// f16 / bf16 weights in 4-row float groups: rows 4q .. 4q+3 hold, for each whole piece j of P
// values (k / P pieces), row 4q's values Pj .. Pj+P-1, then row 4q+1's, 4q+2's, 4q+3's; then the
// last k % P values of row 4q, of row 4q+1, 4q+2, 4q+3. P is the kernel set's (float_rows.inc):
// 8 in the AVX2 set, so that one step of its 4-row tile reads one 64-byte line, and 32 in the
// AVX-512 set; each set makes its own copies (interleave_16bit). A register tile of 4 rows reads
// its group front to back; 4 x row_bytes again, so row offsets are the file's. Copies are made
// in whole 16-row groups, as for q8_0 / q4_0.
struct FloatGroupKernels {
  // w: the first group, n_rows a multiple of 4; the same arithmetic as the set's f16 / bf16
  // file-layout kernels, so the outputs are bit-identical to theirs.
  GemmKernel f16, bf16;
};

// q4_k / q6_k weights in the 16-row lanes layout (k_quant_lanes.h, made at load like the
// copies above): against the same activation rows as the set's file-layout K-quant kernels
// (ActBlock rows in the AVX-512 set, ActBlock256 rows in the AVX2 set). Each call is per-token
// exact, whatever n_tok; the rounding differs from the file layout's kernels (not bit-identical
// to them), so a matrix whose groups have a lanes copy sends every per-token row there
// (ops/matmul.cpp).
struct KQuantLaneKernels {
  // w: n_rows (a multiple of 16) rows of k values in the file's layout -> out, the same size.
  void (*interleave_q4_k)(const void* w, size_t w_row_bytes, int64_t n_rows, int64_t k, void* out);
  void (*interleave_q6_k)(const void* w, size_t w_row_bytes, int64_t n_rows, int64_t k, void* out);
  // w: the first group, w_row_bytes the file's row bytes, n_rows a multiple of 16.
  GemmKernel q4_k, q6_k;
  // Calls with more tokens run faster on the file layout's batched path (except the tokens
  // that must be per-token exact, which stay here).
  int64_t q4_k_max_tokens, q6_k_max_tokens;
};

struct InterleavedKernels {
  // w: n_rows (a multiple of 16) rows of k values in the file's layout -> out, the same size.
  void (*interleave_q8_0)(const void* w, size_t w_row_bytes, int64_t n_rows, int64_t k, void* out);
  void (*interleave_q4_0)(const void* w, size_t w_row_bytes, int64_t n_rows, int64_t k, void* out);
  // The same for 16-bit values (f16 or bf16) into 4-row float groups.
  void (*interleave_16bit)(const void* w, size_t w_row_bytes, int64_t n_rows, int64_t k, void* out);
  // w: the first group of the interleaved layout, w_row_bytes the file's row bytes, n_rows a
  // multiple of 16. Every token's outputs are bit-identical to the same set's q8_0_per_token /
  // q4_0_per_token on the file's layout, whatever n_tok: the two layouts give the same
  // results, so a matrix may mix them row group by row group and call by call.
  GemmKernel q8_0, q4_0;
  // Calls with more tokens run faster on the file's layout (matmul sends them there).
  int64_t max_tokens;
  // f16 / bf16 in float groups (any number of tokens; the tiles walk them as the file's layout).
  FloatGroupKernels floats;
  // q4_k / q6_k lanes; null in sets without them.
  const KQuantLaneKernels* k_lanes = nullptr;
};

struct GemmKernels {
  const char* isa;
  GemmKernel f32, f16, bf16, q8_0, q4_0;
  // The same q8_0 / q4_0 products computed so that each token's outputs are bit-identical to a
  // call with that token alone. A set whose batched kernel rounds like its tiles (AVX-512: the
  // 16-row packed path and the tiles both sum each block's integer dot product exactly, then
  // fma it block after block) points these at the batched kernel itself, and matmul then
  // sends every token through it. The float kernels always are.
  GemmKernel q8_0_per_token, q4_0_per_token;
  // q2_b, against ActBlock128 rows (x_row_bytes = k / 128 * 136): register tiles only, so every
  // call is per-token exact. A block's dot is d_w * d_a * (sum q a - 1.5 * sum a), computed as
  // (d_w / 2) * d_a * (sum (2q) a - 3 * sum a) so that the integer part stays exact.
  GemmKernel q2_b;
  // ggml's types; `ggml` may take a batched path for 4+ tokens, `ggml_per_token` computes each
  // token's outputs bit-identical to a call with that token alone (as q8_0_per_token).
  const GgmlBlockKernels* ggml;
  const GgmlBlockKernels* ggml_per_token;
  // x: (k) floats -> (k / 32) blocks, the same result as quantize_activations.
  void (*quantize)(const float* x, ActBlock* y, int64_t k);
  // x: (k) floats -> (k / 128) blocks, the same result as quantize_activations_128.
  void (*quantize_128)(const float* x, ActBlock128* y, int64_t k);
  // x: (k) floats -> (k / 256) blocks, the same result as quantize_activations_256.
  void (*quantize_256)(const float* x, ActBlock256* y, int64_t k);
  // Null in sets without the interleaved layout (scalar).
  const InterleavedKernels* interleaved;
};

const GemmKernels& scalar_gemm_kernels();
const GgmlBlockKernels& scalar_ggml_block_kernels();
// The reference for sets with super_block_activations: its K-quant entries take ActBlock256
// rows (the other entries are scalar_ggml_block_kernels').
const GgmlBlockKernels& scalar_ggml_super_block_kernels();
// Null when this build or CPU lacks AVX-512 VNNI (checked by avx512_gemm_kernels).
const GgmlBlockKernels* avx512_ggml_block_kernels_impl();
const GgmlBlockKernels* avx512_ggml_per_token_kernels_impl();
// Null when this build lacks AVX2 (gemm_ggml_avx2.cpp: register tiles only, so per-token exact).
const GgmlBlockKernels* avx2_ggml_block_kernels_impl();
// Null when this build lacks AVX2 (gemm_avx2_interleaved.cpp).
const InterleavedKernels* avx2_interleaved_kernels_impl();
// The float-group tiles of the AVX2 and AVX-512 sets (gemm_avx2.cpp, gemm_avx512.cpp).
FloatGroupKernels avx2_float_group_kernels_impl();
FloatGroupKernels avx512_float_group_kernels_impl();
// Null when this build lacks AVX-512 VNNI or AVX2 (gemm_avx512_interleaved.cpp); the caller
// checks the CPU, as for avx512_gemm_kernels_impl.
const InterleavedKernels* avx512_interleaved_kernels_impl();
// Null when this build lacks AVX-512 VNNI (gemm_avx512_k_lanes.cpp) or AVX2 (gemm_avx2_k_lanes.cpp).
const KQuantLaneKernels* avx512_k_lane_kernels_impl();
const KQuantLaneKernels* avx2_k_lane_kernels_impl();
// Null when this build or CPU lacks the instruction set.
const GemmKernels* avx2_gemm_kernels();
const GemmKernels* avx512_gemm_kernels();
// The fastest set the CPU supports (honours AFM_CPU, see base/cpu_features.h).
const GemmKernels& best_gemm_kernels();

// x: (k) floats -> (k / 32) blocks; d = max|x| / 127, q = round-half-even(x / d). A block
// holding NaN or inf gets d = NaN / inf and q = 0, so its products stay non-finite.
void quantize_activations(const float* x, ActBlock* y, int64_t k);
// The same rule over 128-value blocks (k a multiple of 128).
void quantize_activations_128(const float* x, ActBlock128* y, int64_t k);
// The same rule over 256-value blocks (k a multiple of 256), plus the sums of each 16 codes.
void quantize_activations_256(const float* x, ActBlock256* y, int64_t k);

}  // namespace afm::cpu
