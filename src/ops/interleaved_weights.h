// Owns the 16-row interleaved copies of a model's q8_0 / q4_0 matrices (the layout in
// backend/cpu/gemm.h, InterleavedKernels), made once at load so that decode reads each weight
// byte once with no per-row reduction, as llama.cpp's repacked CPU buffers do; the 4-row float
// groups of its f16 / bf16 matrices (same file), which a register tile reads front to back where
// the file's layout has it read four rows side by side (the hardware prefetcher follows one
// stream, not four short ones: one core decoded f16 ~40% faster); the 16-row lanes of its
// q4_k / q6_k matrices (backend/cpu/k_quant_lanes.h), where a sub-block's scale work is paid
// once per 16 rows (one core decoded Qwen3-0.6B Q4_K_M at 61-69 tokens/s against 47-52,
// docs/engine.md); and the lane
// forms of its astc6x6 matrices (quant/astc_lanes.h: the file's size plus the few tiles that
// have no lane block), which decode with a few SIMD operations per tile instead of a block parse.
//
// The copy has the file's size; the file's pages it replaces are given back to the OS
// (gguf::File::drop_resident), so a model is not held twice. AFM_INTERLEAVE=0 turns copies off:
// processes then share the file's pages (several servers on one file) and matmul takes the
// file's layout, with the same results bit for bit but slower decode (astc6x6 and q4_k / q6_k:
// the same weights summed in another order; astc6x6 decodes about 20x slower).
// AFM_ASTC_LANES=0 turns off the astc6x6 lane forms alone, AFM_K_LANES=0 the q4_k / q6_k lanes
// (those matrices are then copied verbatim).
//
// The copies live on transparent huge pages where the system allows them (HugePageArena).
//
// Not thread-safe; matrices that point into the store must not outlive it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/huge_page_arena.h"
#include "gguf/reader.h"
#include "ops/matrix.h"

namespace afm::ops {

class InterleavedWeights {
 public:
  // Whether attach() makes copies: this CPU's kernels read the layout and AFM_INTERLEAVE is not 0.
  static bool enabled();

  // When copies are enabled: sets m.interleaved to a new copy of m's whole 16-row groups when
  // m is q8_0 / q4_0 / f16 / bf16 with at least 16 rows, or q4_k / q6_k in a kernel set with
  // their lanes (and AFM_K_LANES is not 0); points m.data at a verbatim copy on huge pages when
  // m is any other type with rows (q2_k / q3_k / q5_k, q4_1 / q5_x, q2_b, f32, and the types
  // above when under 16 rows or without their copy in this kernel set): its kernels read the
  // file's layout, which streams faster off huge pages (measured before q4_k / q6_k had lanes,
  // Qwen3-0.6B decode on one Zen 4 core: Q4_K_M +20-30%, Q6_K +5-15%, docs/engine.md). Sets
  // m.interleaved to the lane forms of m's `stack` matrices (each m.rows / stack rows, tiled on
  // its own) when m is astc6x6 and AFM_INTERLEAVE is not 0. Otherwise leaves m as it is.
  // `file` holds m.data: the copied pages are dropped from it.
  void attach(Matrix& m, const gguf::File& file, int64_t stack = 1);

  size_t bytes() const { return bytes_; }  // all copies

 private:
  void attach_astc(Matrix& m, const gguf::File& file, int64_t stack);
  void attach_verbatim(Matrix& m, const gguf::File& file);
  uint8_t* allocate(size_t bytes);

  HugePageArena arena_;  // huge pages: decode streams the copies (base/huge_page_arena.h)
  size_t bytes_ = 0;
};

// The part of m a row range [row0, row0 + rows) keeps: the interleaved copy carries over when
// row0 starts a group (the layout's offsets are the file's); otherwise it is dropped. Not for
// astc6x6, whose row ranges are experts (expert_copy).
const void* interleaved_slice(const Matrix& m, int64_t row0);
// The copy of the e-th of m's stacked matrices of `rows` rows each.
const void* expert_copy(const Matrix& m, int64_t e, int64_t rows);

}  // namespace afm::ops
