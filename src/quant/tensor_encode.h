// Encodes f32 values as a GGUF tensor type and decodes them back: the one place that knows
// every type's codec, shared by every writer of model files (`afm convert`, `afm quantize`,
// adapter merging, the trainer's export) and every reader of whole rows (embedding lookup, the
// trainer's import).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gguf/types.h"

namespace afm::quant {

// Row-block types only: astc6x6, a tile type, is refused (Error kUnsupported) by every function
// here except llama_file_type; its matrices go through quant/astc6x6.h and astc_encoder.h.
//
// Whether encode_values writes `type`. ggml's q4_1 / q5_0 / q5_1 and K-quant types are read
// only (decode_values and the kernels take them); encode_values refuses them with kUnsupported.
bool can_encode(gguf::TensorType type);

// Encodes x (n values) as `type` into out, which must hold tensor_bytes(type, n). For block
// types n must be a multiple of the block size (32; 128 for q2_b, whose scales the encoder
// picks per block by least squared error: quantize_row_q2b_search).
void encode_values(const float* x, size_t n, gguf::TensorType type, uint8_t* out);
// The same into a vector, resized to fit.
void encode_tensor(const float* x, size_t n, gguf::TensorType type, std::vector<uint8_t>& out);
// Decodes n values of `type` (whole blocks) from in.
void decode_values(const uint8_t* in, size_t n, gguf::TensorType type, float* out);

// Bytes of n values of `type` (n a multiple of its block size).
size_t encoded_bytes(gguf::TensorType type, size_t n);

// llama.cpp's general.file_type number (LLAMA_FTYPE_*) for a model mostly stored as `type`;
// 1024 (LLAMA_FTYPE_GUESSED, "not given") for afm's own types, which have none.
uint32_t llama_file_type(gguf::TensorType type);

}  // namespace afm::quant
