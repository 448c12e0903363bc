// Turns one safetensors tensor into GGUF tensor bytes of a target type.
#pragma once

#include <cstdint>
#include <vector>

#include "gguf/types.h"
#include "hf/safetensors.h"

namespace afm::hf {

// The type a tensor is stored as when `requested` is asked for: 1-D tensors stay f32 (norms and
// biases are tiny and precision-critical, as in llama.cpp); block types fall back to f16 when
// the row length is not a multiple of 32.
gguf::TensorType storage_type(const SafeTensor& t, gguf::TensorType requested);

// Source values as f32, row-major in PyTorch order. Error(kUnsupported) for dtypes other than
// F32/F16/BF16, naming the tensor.
std::vector<float> to_f32(const SafeTensor& t);

// Reorders rows of a (n_head * head_dim, cols) matrix (or a bias) from rotate-half pairs
// (i, i + head_dim/2) to adjacent pairs (2i, 2i + 1), per head: llama.cpp's q/k permutation.
std::vector<float> permute_rope_rows(const std::vector<float>& x, uint64_t rows, uint64_t cols,
                                     uint64_t n_head);

// Encodes f32 values as `type`; for block types, x.size() must be a multiple of 32 (rows are
// contiguous, so whole tensors can be encoded in one pass).
void encode(const std::vector<float>& x, gguf::TensorType type, std::vector<uint8_t>& out);

}  // namespace afm::hf
